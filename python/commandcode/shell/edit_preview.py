"""The diff a `write_file` or `edit_file` call would make, shown above its permission question
(Claude Code shows it too): the file as it is against the file as the tool would leave it, read
with the one safe opener and bounded, so a planted FIFO or a huge file costs nothing."""

from __future__ import annotations

import difflib
import os
from typing import Any

MAX_READ = 1 << 20
MAX_LINES = 40


def _current(path: str) -> str | None:
    """The file's text, "" when it does not exist, None when it cannot be shown (not a regular
    file, too big, unreadable, not text)."""
    from ..errors import CommandcodeError
    from ..storage.regular import read_regular

    try:
        data = read_regular(path, limit=MAX_READ)
    except FileNotFoundError:
        return ""
    except (CommandcodeError, OSError, ValueError):
        return None
    if len(data) > MAX_READ:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def edit_diff(tool: str, tool_input: dict[str, Any], cwd: str) -> list[str]:
    """Unified diff lines (at most MAX_LINES, then a count of the rest); [] for other tools or
    when nothing can be shown."""
    file_path = tool_input.get("file_path")
    if tool not in ("write_file", "edit_file") or not isinstance(file_path, str) or not file_path:
        return []
    path = os.path.join(cwd, file_path)
    before = _current(path)
    if before is None:
        return []
    if tool == "write_file":
        after = tool_input.get("content")
        if not isinstance(after, str):
            return []
    else:
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str) or not old or old not in before:
            return []
        after = before.replace(old, new) if tool_input.get("replace_all") else before.replace(old, new, 1)
    lines = [line.rstrip("\n") for line in difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{file_path}", f"b/{file_path}", n=2)]
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + [f"… {len(lines) - MAX_LINES} more line(s)"]
    return lines
