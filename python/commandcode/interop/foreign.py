"""What the Claude Code and pi readers share: reading a foreign JSONL file read-only, and
`ForeignSession`, the `sessions.view.SessionView` both readers build.

A foreign session is read whole into memory (these files are what other agents wrote; they are
opened for inspection and import, not on a hot path) with JavaScript's line rules
(`storage.jsonl`); a line that is not a JSON object is a `SkippedLine` (`torn` when it is the
unterminated last line), never an error. Nothing here writes: the source trees stay as they are.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InvalidSessionError
from ..sessions.context import Context
from ..sessions.reader_values import Anomalies, Header, SkippedLine, TreeRow
from ..storage.ids import iso_from_ms
from ..storage.jsonl import parse_line
from ..storage.regular import read_regular

SOURCES = ("claude", "pi")


class Line:
    """One parsed line: its 1-based number, byte offset and JSON object."""

    __slots__ = ("number", "offset", "value")

    def __init__(self, number: int, offset: int, value: dict[str, Any]) -> None:
        self.number = number
        self.offset = offset
        self.value = value


def read_jsonl(path: Path) -> tuple[list[Line], list[SkippedLine]]:
    """Every JSON object line of the file, and the lines skipped (torn, not JSON, not an object).

    Raises:
        InvalidSessionError: there is no regular file at `path`.
        OSError: it cannot be read.
    """
    if not path.is_file():
        raise InvalidSessionError(f"no transcript at {path}")
    data = read_regular(path)
    lines: list[Line] = []
    skipped: list[SkippedLine] = []
    offset = 0
    number = 0
    for raw in data.split(b"\n"):
        start = offset
        offset += len(raw) + 1
        if not raw.strip():
            if raw:
                number += 1
            continue
        number += 1
        ok, value = parse_line(raw)
        if ok and isinstance(value, dict):
            lines.append(Line(number, start, value))
            continue
        torn = offset > len(data) and not data.endswith(b"\n")
        reason = "torn" if torn else ("invalid_json" if not ok else "not_an_object")
        detail = "the last line has no newline and is not complete JSON" if torn else (
            "not JSON" if not ok else "a JSON value that is not an object")
        skipped.append(SkippedLine(number, start, len(raw), reason, detail))
    return lines, skipped


class ForeignSession:
    """A session another agent wrote, as the inspection commands and the importer read it.

    Subclasses fill the fields in their constructor; `rows` are the tree nodes (file order),
    `context_ids` the entries behind the model context (root first), `messages` the context in
    Command Code's message shape, `warnings` what was odd or repaired (one line each).
    """

    source = ""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[Line] = []
        self.skipped_lines: list[SkippedLine] = []
        self.warnings: list[str] = []
        self.rows: list[TreeRow] = []
        self.context_ids: list[str] = []
        self.messages: list[dict[str, Any]] = []
        self._id = path.stem
        self._cwd = ""
        self._name: str | None = None
        self._leaf: str | None = None
        self._model: str | None = None
        self._effort: str | None = None
        self._created: str | None = None
        self._modified: str | None = None
        self._message_count = 0
        self._first_message: str | None = None
        self.parent_session_id: str | None = None
        self.parent_session_path: str | None = None
        self.git_branch: str | None = None
        self.anomalies = Anomalies(False, 0, 0)

    # SessionView ------------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self._id

    @property
    def header(self) -> Header:
        return Header(self._id, self.created, self._cwd, parent_session=self.parent_session_path, synthesized=True)

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def created(self) -> str:
        return self._created or self._mtime()

    @property
    def modified(self) -> str:
        return self._modified or self._mtime()

    @property
    def message_count(self) -> int:
        return self._message_count

    @property
    def leaf_id(self) -> str | None:
        return self._leaf

    @property
    def model(self) -> str | None:
        return self._model

    @property
    def effort(self) -> str | None:
        return self._effort

    @property
    def entry_count(self) -> int:
        return len(self.lines)

    @property
    def entrypoint(self) -> str | None:
        return None

    def first_message(self) -> str | None:
        return self._first_message

    def tree_rows(self, start: int = 0, stop: int | None = None) -> Iterator[TreeRow]:
        yield from self.rows[max(start, 0):stop]

    def context(self) -> Context:
        return Context(self._leaf, list(self.context_ids), [dict(message) for message in self.messages])

    def entries(self, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        for line in self.lines[max(start, 0):stop]:
            yield line.value

    # helpers ----------------------------------------------------------------------------------
    def _mtime(self) -> str:
        try:
            return iso_from_ms(int(os.stat(self.path).st_mtime * 1000))
        except OSError:
            return iso_from_ms(0)

    def describe_extra(self) -> dict[str, Any]:
        """Source-specific fields for `sessions show` (subclasses add theirs)."""
        return {"source": self.source, "warnings": list(self.warnings)}


def subfolders(root: Path) -> list[Path]:
    """The folders directly in `root`, sorted (none when it cannot be listed)."""
    try:
        return [root / name for name in sorted(os.listdir(root)) if (root / name).is_dir()]
    except OSError:
        return []


def jsonl_files_newest_first(folders: list[Path]) -> list[Path]:
    """The `*.jsonl` regular files directly in `folders`, newest modification first."""
    found: list[tuple[float, Path]] = []
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = folder / name
            if name.endswith(".jsonl") and path.is_file():
                found.append((path.stat().st_mtime, path))
    return [path for _mtime, path in sorted(found, key=lambda item: item[0], reverse=True)]


def text_of(content: Any) -> str | None:
    """The first non-blank text of message content (a string or text blocks)."""
    if isinstance(content, str):
        return content if content.strip() else None
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str) \
                    and block["text"].strip():
                return str(block["text"])
    return None
