"""The typed values a session reader hands out: `Header`, `SkippedLine`, `Anomalies`, `TreeRow`.

Plain `Frozen` value classes (no `dataclasses`: a warm open must not import it), built from the
native index's tuples and dicts at the edge, so nothing above `sessions/` sees an untyped dict.
"""

from __future__ import annotations

from ..values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Header(Frozen):
    """A transcript's header (format §4.2), or the one synthesized when the file has none.

    `session_id` is the legacy header field some forks carry (the real CLI's `sessionId`), not the
    session's id (the transcript's file name); `line` is the header's 1-based line, `None` when
    `synthesized`.
    """

    __slots__ = ("id", "timestamp", "cwd", "parent_session", "session_id", "line", "synthesized")
    id: str
    timestamp: str
    cwd: str
    parent_session: str | None
    session_id: str | None
    line: int | None
    synthesized: bool

    def __init__(self, id: str, timestamp: str, cwd: str, *, parent_session: str | None = None,
                 session_id: str | None = None, line: int | None = None, synthesized: bool = False) -> None:
        self._set(id=id, timestamp=timestamp, cwd=cwd, parent_session=parent_session, session_id=session_id,
                  line=line, synthesized=synthesized)

    @classmethod
    def from_native(cls, value: dict[str, Any]) -> Header:
        return cls(str(value["id"]), str(value["timestamp"]), str(value["cwd"]),
                   parent_session=value.get("parent_session"), session_id=value.get("session_id"),
                   line=value.get("line"))

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class SkippedLine(Frozen):
    """A line the reader skipped: 1-based `line`, byte `offset` and `length`, `reason` (e.g.
    `torn`, `invalid_json`), and a human `detail`."""

    __slots__ = ("line", "offset", "length", "reason", "detail")
    line: int
    offset: int
    length: int
    reason: str
    detail: str

    def __init__(self, line: int, offset: int, length: int, reason: str, detail: str) -> None:
        self._set(line=line, offset=offset, length=length, reason=reason, detail=detail)

    @classmethod
    def from_native(cls, value: dict[str, Any]) -> SkippedLine:
        return cls(value["line"], value["offset"], value["length"], value["reason"], value["detail"])

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class Anomalies(Frozen):
    """What the tree walk met: a parent cycle, entries whose parent is unknown, duplicate ids."""

    __slots__ = ("cycle_detected", "unknown_parents", "duplicate_ids")
    cycle_detected: bool
    unknown_parents: int
    duplicate_ids: int

    def __init__(self, cycle_detected: bool, unknown_parents: int, duplicate_ids: int) -> None:
        self._set(cycle_detected=cycle_detected, unknown_parents=unknown_parents, duplicate_ids=duplicate_ids)

    @classmethod
    def from_native(cls, value: dict[str, Any]) -> Anomalies:
        return cls(value["cycle_detected"], value["unknown_parents"], value["duplicate_ids"])

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class TreeRow(Frozen):
    """One entry of the session tree, for navigation and display."""

    __slots__ = ("id", "parent_id", "type", "timestamp", "line", "label", "on_active_path")
    id: str
    parent_id: str | None
    type: str
    timestamp: str
    line: int
    label: str | None
    on_active_path: bool

    def __init__(self, id: str, parent_id: str | None, type: str, timestamp: str, line: int,
                 label: str | None, on_active_path: bool) -> None:
        self._set(id=id, parent_id=parent_id, type=type, timestamp=timestamp, line=line, label=label,
                  on_active_path=on_active_path)
