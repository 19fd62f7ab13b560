"""One row of a session listing (`SessionSummary`) and how a row is made from a transcript.

The fields are the real CLI's listing fields (ref §9: created, modified, message count
over the whole file, first visible user message, name, git branch, entrypoint, lineage), plus
what we add: size on disk, the last prompt, and `damaged` — why a session could not be read
whole (a transcript that cannot be opened, skipped lines, a meta file that is not a JSON object),
or None. A damaged session is still a row: a listing never hides or touches a session it cannot
read. The directory scan and the catalog make rows with the same functions, so they agree.
"""

from __future__ import annotations

import os

from ..sessions.facts import display_name, reference_names
from ..sessions.texts import last_prompt_of
from ..storage.ids import iso_from_ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..sessions.reader import Session

LINEAGE_TITLE_CHARS = 40


FIELDS = ("id", "name", "created", "modified", "message_count", "first_message", "git_branch", "entrypoint",
          "parent_session_id", "path", "cwd", "skipped_lines", "size", "last_prompt", "lineage", "damaged")
_DEFAULTS: dict[str, object] = {"size": 0, "last_prompt": None, "lineage": None, "damaged": None,
                                "user_renamed": False, "aliases": (), "cwd_recorded": True}


class SessionSummary:
    """One row of a session listing (`FIELDS`, in this order, are its JSON; `user_renamed` and
    `aliases`, the names a reference may use, are not shown). A plain class, not a dataclass:
    `dataclasses` costs more to import than a warm listing of 10,000 sessions takes."""

    __slots__ = (*FIELDS, "user_renamed", "aliases", "cwd_recorded")
    id: str
    name: str | None
    created: str
    modified: str
    message_count: int
    first_message: str | None
    git_branch: str | None
    entrypoint: str | None
    parent_session_id: str | None
    path: str
    cwd: str
    skipped_lines: int
    size: int
    last_prompt: str | None
    lineage: str | None
    damaged: str | None
    user_renamed: bool
    aliases: tuple[str, ...]
    cwd_recorded: bool  # False: the header has no usable cwd; `cwd` is the listing process's own

    def __init__(self, **values: Any) -> None:
        for name, value in values.items():  # one pass over what is given (a refresh makes 10,000 rows)
            if name not in _SLOTS:
                raise TypeError(f"SessionSummary has no field {name}")
            setattr(self, name, value)
        if len(values) < len(_SLOTS):
            for name in self.__slots__:
                if name in values:
                    continue
                if name not in _DEFAULTS:
                    raise TypeError(f"SessionSummary needs {name}")
                setattr(self, name, _DEFAULTS[name])

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS}

    @property
    def headless(self) -> bool:
        """Hidden from listings without `--all`: a `-p` session with no name. The seed hides them
        "because they carry no title"; a named one (`-n`, `sessions rename`) has one."""
        return self.entrypoint == "print" and not self.name

    def with_lineage(self, lineage: str | None) -> SessionSummary:
        values = {name: getattr(self, name) for name in self.__slots__}
        values["lineage"] = lineage
        return SessionSummary(**values)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionSummary):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "SessionSummary(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in FIELDS) + ")"


_SLOTS = frozenset(SessionSummary.__slots__)


def meta_fields(meta: dict[str, Any], native_name: str | None) -> dict[str, Any]:
    """The row fields that come from the meta sidecar (with the transcript's `session_info`
    name, which wins over `meta.title`): name, branch, entrypoint, parent, rename flag, aliases."""
    if not meta:  # most sessions have no meta sidecar: the same fields, without the dictionary walk
        return {"name": native_name or None, "git_branch": None, "entrypoint": None, "parent_session_id": None,
                "user_renamed": False, "aliases": (native_name,) if native_name else ()}
    name = display_name(native_name, meta)

    def text(key: str) -> str | None:
        value = meta.get(key)
        return value if isinstance(value, str) else None

    return {"name": name, "git_branch": text("gitBranch"), "entrypoint": text("entrypoint"),
            "parent_session_id": text("parentSessionId"), "user_renamed": meta.get("userRenamed") is True,
            "aliases": reference_names(name, meta)}


def summarize(session: Session, *, last_prompt: str | bool | None = False) -> SessionSummary:
    """The listing fields of a session (ref §9). `last_prompt` is the last prompt when the
    caller already knows it; otherwise the tail of the transcript is read for it."""
    skipped = len(session.skipped_lines)
    damaged = meta_damage(session.meta, session.files.meta)
    if skipped:
        damaged = f"{skipped} unreadable line(s) skipped" + (f"; {damaged}" if damaged else "")
    try:
        size = os.stat(session.path).st_size
    except OSError:
        size = 0
    prompt = last_prompt_of(os.fspath(session.path)) if last_prompt is False else last_prompt
    fields = meta_fields(session.meta, session.name)
    return SessionSummary(
        id=session.id, created=session.created, modified=session.modified,
        message_count=session.message_count, first_message=session.first_message(), path=str(session.path),
        cwd=session.cwd, skipped_lines=skipped, size=size, last_prompt=prompt if isinstance(prompt, str) else None,
        damaged=damaged, cwd_recorded=not session.header.synthesized, **fields,
    )


def meta_damage(meta: dict[str, Any], meta_path: Path) -> str | None:
    """Why the meta sidecar could not be read, when it is there and is not a JSON object."""
    if meta:
        return None
    from ..storage.regular import read_if_exists  # refuses a FIFO or device, never blocks on it

    try:
        raw = read_if_exists(meta_path, follow=True)
    except OSError as error:
        return f"meta file cannot be read ({error.strerror or error})"
    if raw is None or not raw.strip():
        return None
    return "meta file is not a JSON object (ignored, left as it is)"


def damaged_summary(path: str, reason: str) -> SessionSummary:
    """The row of a transcript that cannot be opened: its id, path and file times, and why."""
    session_id = os.path.basename(path)[: -len(".jsonl")]
    try:
        stat = os.stat(path)
        moment, size = iso_from_ms(int(stat.st_mtime * 1000)), stat.st_size
    except OSError:
        moment, size = iso_from_ms(0), 0
    return SessionSummary(id=session_id, name=None, created=moment, modified=moment, message_count=0,
                          first_message=None, git_branch=None, entrypoint=None, parent_session_id=None, path=path,
                          cwd="", skipped_lines=0, size=size, damaged=reason)


def with_lineage(rows: list[SessionSummary], known: dict[str, SessionSummary]) -> list[SessionSummary]:
    """Rows with their lineage label: `fork of <parent name or first message, 40 chars>`, plus
    ` (n)` for the n-th unnamed fork of one parent (the real picker's label; a fork the user named
    gets no counter). `known` maps ids to rows, to name parents and count their forks."""
    forks: dict[str, list[SessionSummary]] = {}
    for row in known.values():
        if row.parent_session_id:
            forks.setdefault(row.parent_session_id, []).append(row)
    for siblings in forks.values():
        siblings.sort(key=lambda row: (row.created, row.id))
    labelled = []
    for row in rows:
        parent_id = row.parent_session_id
        if not parent_id:
            labelled.append(row)
            continue
        parent = known.get(parent_id)
        title = (parent.name or parent.first_message or parent.id) if parent is not None else parent_id[:8]
        title = " ".join(title.split())[:LINEAGE_TITLE_CHARS]
        label = f"fork of {title}"
        if not row.user_renamed:
            unnamed = [sibling.id for sibling in forks.get(parent_id, []) if not sibling.user_renamed]
            position = unnamed.index(row.id) + 1 if row.id in unnamed else 1
            if position > 1:
                label += f" ({position})"
        labelled.append(row.with_lineage(label))
    return labelled
