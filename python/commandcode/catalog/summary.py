"""One row of a session listing (`SessionSummary`) and how a row is made from a transcript.

The fields are the real CLI's listing fields (format doc §9: created, modified, message count
over the whole file, first visible user message, name, git branch, entrypoint, lineage), plus
what we add: size on disk, the last prompt, and `damaged` — why a session could not be read
whole (a transcript that cannot be opened, skipped lines, a meta file that is not a JSON object),
or None. A damaged session is still a row: a listing never hides or touches a session it cannot
read. The directory scan and the catalog make rows with the same functions, so they agree.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..sessions.reader import Session
from ..storage.ids import iso_from_ms
from .texts import last_prompt_of

LINEAGE_TITLE_CHARS = 40


@dataclass(frozen=True)
class SessionSummary:
    """One row of a session listing."""

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
    size: int = 0
    last_prompt: str | None = None
    lineage: str | None = None
    damaged: str | None = None
    user_renamed: bool = False
    aliases: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        row = asdict(self)
        del row["aliases"], row["user_renamed"]
        return row

    def with_lineage(self, lineage: str | None) -> SessionSummary:
        return replace(self, lineage=lineage)


def summarize(session: Session, *, last_prompt: str | bool | None = False) -> SessionSummary:
    """The listing fields of a session (format §9). `last_prompt` is the last prompt when the
    caller already knows it (the catalog does, from its text pass); otherwise the tail of the
    transcript is read for it."""
    meta = session.meta
    damaged = _meta_damage(session)
    skipped = len(session.skipped_lines)
    if skipped:
        damaged = f"{skipped} unreadable line(s) skipped" + (f"; {damaged}" if damaged else "")
    try:
        size = os.stat(session.path).st_size
    except OSError:
        size = 0
    prompt = last_prompt_of(os.fspath(session.path)) if last_prompt is False else last_prompt
    names = [value.strip() for value in (meta.get("title"), meta.get("name")) if isinstance(value, str) and value.strip()]
    return SessionSummary(
        id=session.id, name=session.name, created=session.created, modified=session.modified,
        message_count=session.message_count, first_message=session.first_message(), git_branch=session.git_branch,
        entrypoint=session.entrypoint, parent_session_id=session.parent_session_id, path=str(session.path),
        cwd=session.cwd, skipped_lines=skipped, size=size, last_prompt=prompt if isinstance(prompt, str) else None,
        damaged=damaged, user_renamed=meta.get("userRenamed") is True,
        aliases=tuple(dict.fromkeys(name for name in (session.name, *names) if name)),
    )


def _meta_damage(session: Session) -> str | None:
    """Why the meta sidecar could not be read, when it is there and is not a JSON object."""
    if session.meta:
        return None
    from ..storage.regular import read_if_exists  # refuses a FIFO or device, never blocks on it

    try:
        raw = read_if_exists(session.files.meta, follow=True)
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
