"""The agent's file and shell tools, with the real CLI's input names and result texts.

`read_file {file_path}`, `write_file {file_path, content}`, `edit_file {file_path, old_string,
new_string, replace_all?}`, `bash {command, timeout?}` (`agent/bash_tool.py`). Relative paths resolve against the
session's working directory. A failing tool returns an error text (the model sees it); it never
raises into the agent loop.

What the file tools touch, and how:
- Only regular files. A FIFO, socket, device or folder at the target is refused with a tool error
  (opened with `storage.regular.open_regular`, so nothing can block).
- `read_file` follows symlinks and is bounded: at most `MAX_READ_LINES` lines, `MAX_READ_BYTES`
  bytes and `MAX_OUTPUT_CHARS` characters; a result cut at a bound says which bound and that the
  file goes on. Reading inside the data dir is allowed (it changes nothing, and the tool can read
  any other file on the disk anyway).
- `write_file` and `edit_file` refuse a target inside the data dir (`COMMANDCODE_HOME`: the
  session's own transcript, checkpoints, backups), judged on the real path of the target and of
  its folder, so a symlink into the data dir is refused too. They refuse a final symlink (a
  checkpoint never backs up through a symlink, so an edit through one could not be rewound); the
  error names the file it points to, which the model can edit instead.
- A file this user may not write (`os.access`, as `open(path, "w")` would judge it: root may) is
  refused, though the temp file + rename below would only need the folder to be writable.
- A write encodes first, then replaces the file through a temp file in the same folder and a
  rename, keeping its mode and owner; any failure (a lone surrogate, a full disk) leaves the file
  exactly as it was. A hard-linked target becomes a file of its own: its other names keep the old
  bytes (as after a rewind).
- Writers of one file take turns (`storage.path_locks`): a session's sub-agents run tools on
  threads of their own, and two edits of a file never interleave (neither is lost); the
  checkpoint backup of the file holds the same lock up to the write
  (`CheckpointManager.editing`).
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..checkpoints.settling import before_project_write
from ..config.paths import data_root
from ..storage.durable import replace_file
from ..storage.path_locks import path_lock
from ..storage.regular import NotRegularFileError, open_regular, read_all
from .bash_tool import MAX_OUTPUT_CHARS, run_bash

EDITING_TOOLS = frozenset({"write_file", "edit_file"})
MAX_READ_LINES = 2_000
MAX_READ_BYTES = 256 * 1024
MAX_EDIT_BYTES = 10 * 1024 * 1024  # the checkpoint backup cap: a bigger file could not be rewound


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


def run_tool(name: str, tool_input: dict[str, Any], cwd: Path, *, cancel: threading.Event | None = None,
             env: dict[str, str] | None = None) -> ToolResult:
    """Runs one tool call; `env` is added to a shell command's environment (the scratchpad's).

    Raises:
        TurnInterrupted: `cancel` was set while `bash` ran (its process group was killed).
    """
    before_project_write()  # a rewind's restore still settling: its journal must not outlive this write
    try:
        if name == "bash":
            return ToolResult(*run_bash(tool_input, cwd, cancel, env))
        path = target_path(tool_input, cwd)
        if name in ("read_file", "write_file", "edit_file") and path is None:
            return ToolResult(f"Error: {name} needs a `file_path`", True)
        if path is not None and not nameable(path):
            why = "contains a NUL byte" if "\x00" in str(path) else "is not valid Unicode (a lone surrogate)"
            return ToolResult(f"Error: {name}: the file name {str(path)!r} {why}", True)
        if name == "read_file":
            return _read(path)  # type: ignore[arg-type]
        if name == "write_file":
            return _write(path, tool_input)  # type: ignore[arg-type]
        if name == "edit_file":
            return _edit(path, tool_input)  # type: ignore[arg-type]
        return ToolResult(f"Error: unknown tool {name!r}", True)
    except NotRegularFileError as error:
        return ToolResult(f"Error: {error.filename} is {error.strerror}; {name} works on regular files only", True)
    except OSError as error:
        return ToolResult(f"Error: {error.strerror or error} ({error.filename or ''})", True)
    except UnicodeDecodeError:
        return ToolResult(f"Error: {name} needs a UTF-8 text file", True)
    except UnicodeEncodeError as error:
        return ToolResult(f"Error: {name} cannot encode its text as UTF-8 ({error.reason} at position {error.start}); "
                          "the file was not changed", True)
    except ValueError as error:  # e.g. a NUL byte in a path or command
        return ToolResult(f"Error: {error}", True)


def nameable(path: Path) -> bool:
    """Whether `path` can name a file at all (no NUL byte, no lone surrogate)."""
    try:
        return b"\x00" not in os.fsencode(path)
    except UnicodeEncodeError:
        return False


def in_data_dir(path: Path) -> str | None:
    """The real data dir when `path` (the target itself, or its folder, symlinks resolved) lies
    inside it; else None."""
    data = os.path.realpath(data_root())
    for real in (os.path.realpath(path), os.path.join(os.path.realpath(path.parent), path.name)):
        if real == data or real.startswith(data.rstrip(os.sep) + os.sep):
            return data
    return None


def refusal(name: str, path: Path) -> ToolResult | None:
    """Why an editing tool must not touch `path` (None: it may)."""
    if name not in EDITING_TOOLS:
        return None
    data = in_data_dir(path)
    if data is not None:
        return ToolResult(f"Error: {path} is inside commandcode's data folder ({data}); "
                          f"{name} never changes the session files", True)
    try:
        status = os.lstat(path)
    except OSError:
        return None  # missing (a new file), or the open reports it
    if stat.S_ISLNK(status.st_mode):
        return ToolResult(f"Error: {path} is a symlink; {name} does not write through it "
                          f"(edit {os.path.realpath(path)} instead)", True)
    if stat.S_ISREG(status.st_mode) and not os.access(path, os.W_OK, effective_ids=os.access in os.supports_effective_ids):
        # the temp file + rename would work on the folder's permission: judge the file's, as open(path, "w") does
        return ToolResult(f"Error: {path}: permission denied (this user may not write the file); "
                          f"{name} does not replace it", True)
    return None


def _read(path: Path) -> ToolResult:
    descriptor = open_regular(path, follow=True)
    try:
        size = os.fstat(descriptor).st_size
        raw = read_all(descriptor, limit=MAX_READ_BYTES)
    finally:
        os.close(descriptor)
    bound = None
    if len(raw) > MAX_READ_BYTES:
        raw, bound = raw[:MAX_READ_BYTES], f"{MAX_READ_BYTES // 1024} KiB"
        cut = raw.rfind(b"\n")
        raw = raw[:cut + 1] if cut >= 0 else raw
    lines = raw.decode("utf-8", errors="replace").splitlines()
    if len(lines) > MAX_READ_LINES:
        lines, bound = lines[:MAX_READ_LINES], f"{MAX_READ_LINES:,} lines"
    body = "\n".join(f"{number}: {line}" for number, line in enumerate(lines, start=1))
    if len(body) > MAX_OUTPUT_CHARS:
        body, bound = body[:MAX_OUTPUT_CHARS], f"{MAX_OUTPUT_CHARS:,} characters"
    if bound is None:
        return ToolResult(f"Read 1/1 file, {len(lines)} line{'s' if len(lines) != 1 else ''}\n{body}")
    shown = body.count("\n") + 1 if body else 0
    total = f" of {size:,} bytes" if size else ""
    return ToolResult(f"Read 1/1 file, first {shown} line{'s' if shown != 1 else ''}{total} "
                      f"(cut at the read bound of {bound}; the file goes on)\n{body}")


def _current(path: Path, *, read: bool) -> tuple[os.stat_result | None, bytes]:
    """The regular file at `path` (its `stat`, and its bytes when `read`), or `(None, b"")`
    when there is none. Never follows a final symlink, never blocks."""
    try:
        descriptor = open_regular(path)
    except FileNotFoundError:
        return None, b""
    try:
        status = os.fstat(descriptor)
        if not read:
            return status, b""
        if status.st_size > MAX_EDIT_BYTES:
            raise OSError(errno.EFBIG, f"over {MAX_EDIT_BYTES // (1024 * 1024)} MiB, too large to edit", str(path))
        return status, read_all(descriptor, limit=MAX_EDIT_BYTES)
    finally:
        os.close(descriptor)


def _write(path: Path, tool_input: dict[str, Any]) -> ToolResult:
    content = tool_input.get("content")
    if not isinstance(content, str):
        return ToolResult("Error: write_file needs a string `content`", True)
    data = content.encode("utf-8")  # first: a lone surrogate fails here, before any file is touched
    refused = refusal("write_file", path)
    if refused is not None:
        return refused
    with path_lock(os.path.normpath(path)):
        existing, _ = _current(path, read=False)
        if existing is None:
            path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, data, like=existing)
    if existing is not None:
        return ToolResult(f"The file {path} has been updated successfully.")
    return ToolResult(f"File created successfully at: {path}")


def _edit(path: Path, tool_input: dict[str, Any]) -> ToolResult:
    old, new = tool_input.get("old_string"), tool_input.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        return ToolResult("Error: edit_file needs string `old_string` and `new_string`", True)
    refused = refusal("edit_file", path)
    if refused is not None:
        return refused
    with path_lock(os.path.normpath(path)):  # read, change, replace: no other writer in between
        existing, raw = _current(path, read=True)
        if existing is None:
            raise FileNotFoundError(2, "No such file or directory", str(path))
        text = raw.decode("utf-8")
        count = text.count(old)
        if count == 0 or old == "":
            return ToolResult(f"Error: old_string not found in {path}", True)
        if count > 1 and not tool_input.get("replace_all"):
            return ToolResult(f"Error: old_string occurs {count} times in {path}; pass replace_all or more context",
                              True)
        updated = text.replace(old, new) if tool_input.get("replace_all") else text.replace(old, new, 1)
        replace_file(path, updated.encode("utf-8"), like=existing)
    return ToolResult(f"The file {path} has been updated successfully.")
