"""The agent's file and shell tools, with the real CLI's input names and result texts.

`read_file {file_path}`, `write_file {file_path, content}`, `edit_file {file_path, old_string,
new_string, replace_all?}`, `bash {command, timeout?}`. Relative paths resolve against the
session's working directory. A failing tool returns an error text (the model sees it); it never
raises into the agent loop.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EDITING_TOOLS = frozenset({"write_file", "edit_file"})
BASH_TIMEOUT_SECONDS = 120
MAX_OUTPUT_CHARS = 30_000


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned."""

    text: str
    is_error: bool = False


def target_path(tool_input: dict[str, Any], cwd: Path) -> Path | None:
    """The file a tool call names, resolved against `cwd` (None when the input names none)."""
    raw = tool_input.get("file_path", tool_input.get("path"))
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw)
    try:
        path = path.expanduser()
    except RuntimeError:  # `~user` with no such user: the name stays literal
        pass
    return path if path.is_absolute() else cwd / path


def run_tool(name: str, tool_input: dict[str, Any], cwd: Path) -> ToolResult:
    """Runs one tool call."""
    try:
        if name == "bash":
            return _bash(tool_input, cwd)
        path = target_path(tool_input, cwd)
        if name in ("read_file", "write_file", "edit_file") and path is None:
            return ToolResult(f"Error: {name} needs a `file_path`", True)
        if name == "read_file":
            return _read(path)  # type: ignore[arg-type]
        if name == "write_file":
            return _write(path, tool_input)  # type: ignore[arg-type]
        if name == "edit_file":
            return _edit(path, tool_input)  # type: ignore[arg-type]
        return ToolResult(f"Error: unknown tool {name!r}", True)
    except OSError as error:
        return ToolResult(f"Error: {error.strerror or error} ({error.filename or ''})", True)
    except UnicodeDecodeError:
        return ToolResult(f"Error: {name} needs a UTF-8 text file", True)
    except ValueError as error:  # e.g. a NUL byte in a path or command
        return ToolResult(f"Error: {error}", True)


def _read(path: Path) -> ToolResult:
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    body = "\n".join(f"{number}: {line}" for number, line in enumerate(lines, start=1))
    return ToolResult(f"Read 1/1 file, {len(lines)} line{'s' if len(lines) != 1 else ''}\n{body}"[:MAX_OUTPUT_CHARS])


def _write(path: Path, tool_input: dict[str, Any]) -> ToolResult:
    content = tool_input.get("content")
    if not isinstance(content, str):
        return ToolResult("Error: write_file needs a string `content`", True)
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(content)
    if existed:
        return ToolResult(f"The file {path} has been updated successfully.")
    return ToolResult(f"File created successfully at: {path}")


def _edit(path: Path, tool_input: dict[str, Any]) -> ToolResult:
    old, new = tool_input.get("old_string"), tool_input.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        return ToolResult("Error: edit_file needs string `old_string` and `new_string`", True)
    text = path.read_text(encoding="utf-8")
    count = text.count(old)
    if count == 0 or old == "":
        return ToolResult(f"Error: old_string not found in {path}", True)
    if count > 1 and not tool_input.get("replace_all"):
        return ToolResult(f"Error: old_string occurs {count} times in {path}; pass replace_all or more context", True)
    updated = text.replace(old, new) if tool_input.get("replace_all") else text.replace(old, new, 1)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(updated)
    return ToolResult(f"The file {path} has been updated successfully.")


def _bash(tool_input: dict[str, Any], cwd: Path) -> ToolResult:
    command = tool_input.get("command")
    if not isinstance(command, str) or not command.strip():
        return ToolResult("Error: bash needs a `command`", True)
    timeout = tool_input.get("timeout")
    seconds = float(timeout) / 1000 if isinstance(timeout, (int, float)) and timeout > 0 else BASH_TIMEOUT_SECONDS
    try:
        completed = subprocess.run(["/bin/sh", "-c", command], cwd=cwd, capture_output=True, text=True,
                                   errors="replace", timeout=seconds, env={**os.environ}, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return ToolResult(f"Error: command timed out after {seconds:g}s", True)
    output = (completed.stdout + completed.stderr).rstrip("\n")
    if completed.returncode != 0:
        output = f"{output}\nExit code {completed.returncode}".strip()
    return ToolResult(output[:MAX_OUTPUT_CHARS] or "(no output)", completed.returncode != 0)
