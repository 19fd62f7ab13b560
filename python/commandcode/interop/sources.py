"""Finding other agents' sessions: list them and resolve a user's reference, per source.

`source` is `claude` or `pi`. A reference is, in order: a path to a transcript; an exact session
id; a name (trimmed, case-insensitive), this directory's sessions first; a unique id prefix.
Ambiguity is an error listing the candidates. A file that cannot be read is left out of a
listing and described in `errors`, never touched.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CommandcodeError, SessionNotFoundError, UsageError
from ..sessions.resolve import as_path_refused, named, one_named, one_prefixed, prefixed, stripped
from .foreign import SOURCES, ForeignSession

ALL_SOURCES = ("commandcode", *SOURCES)


def check_source(source: str, *, allow_all: bool = True) -> str:
    value = source.strip().lower()
    allowed = (*ALL_SOURCES, "all") if allow_all else ALL_SOURCES
    if value not in allowed:
        raise UsageError(f"unknown source {source!r}", hint=f"use one of: {', '.join(allowed)}")
    return value


def _reader(source: str) -> tuple[Callable[[Path], ForeignSession], Callable[[str | None], list[Path]]]:
    if source == "claude":
        from .claude_code import claude_transcripts, open_claude

        return open_claude, claude_transcripts
    from .pi import open_pi, pi_transcripts

    return open_pi, pi_transcripts


def open_foreign(source: str, path: Path) -> ForeignSession:
    return _reader(source)[0](path)


def list_foreign(source: str, cwd: str, *, all_projects: bool, errors: list[str] | None = None) -> list[ForeignSession]:
    """`source`'s sessions of this directory (or every project), newest first."""
    opener, finder = _reader(source)
    sessions: list[ForeignSession] = []
    for path in finder(None if all_projects else cwd):
        try:
            session = opener(path)
        except (CommandcodeError, OSError) as error:
            if errors is not None:
                errors.append(f"{path}: {error}")
            continue
        if all_projects or not session.cwd or os.path.normpath(session.cwd) == os.path.normpath(cwd):
            sessions.append(session)
    sessions.sort(key=lambda session: (session.modified, session.id), reverse=True)
    return sessions


def resolve_foreign(source: str, ref: str, cwd: str) -> ForeignSession:
    """The `source` session a reference names (see the module docstring).

    Raises:
        SessionNotFoundError: nothing matches.
        AmbiguousSessionError: a name or prefix matches several sessions.
    """
    reference = stripped(ref, hint="pass a session id, id prefix, name or path")
    opener, _finder = _reader(source)
    if reference.endswith(".jsonl") and os.path.isfile(reference):
        return opener(Path(reference).absolute())
    noun = f"{source} session"
    for tier in (False, True):
        sessions = list_foreign(source, cwd, all_projects=tier)
        exact = [session for session in sessions if session.id == reference]
        if exact:
            return exact[0]
        found = one_named(reference, named(reference, sessions, lambda session: (session.name,)), _id, noun)
        if found is None:
            found = one_prefixed(reference, prefixed(reference, sessions, _id), _id, noun)
        if found is not None:
            return found
    listed = f"run `commandcode sessions list --source {source} --all-projects` to see them"
    as_path_refused(reference, noun=f"{source} session", hint=listed)
    raise SessionNotFoundError(f"no {source} session matches {reference!r}", hint=listed)


def _id(session: ForeignSession) -> str:
    return session.id


def summary(session: ForeignSession) -> dict[str, Any]:
    """The listing fields of a foreign session (the same keys as a Command Code listing, plus
    `source` and `warnings`); `damaged` says, as for ours, what was skipped or odd (else None)."""
    problems = [f"{len(session.skipped_lines)} unreadable line(s) skipped"] if session.skipped_lines else []
    if session.warnings:
        problems.append(f"{len(session.warnings)} warning(s)")
    return {"id": session.id, "name": session.name, "created": session.created, "modified": session.modified,
            "message_count": session.message_count, "first_message": session.first_message(),
            "git_branch": session.git_branch, "entrypoint": session.entrypoint,
            "parent_session_id": session.parent_session_id, "path": str(session.path), "cwd": session.cwd,
            "skipped_lines": len(session.skipped_lines), "source": session.source,
            "damaged": "; ".join(problems) or None, "warnings": list(session.warnings)}
