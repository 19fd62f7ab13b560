"""Finding sessions: listing a project's sessions and resolving a user's reference to one.

A reference is, in order: a path to a `.jsonl` transcript; an exact session id (this project,
then every project); a name (the latest `session_info` or `meta.title`, compared trimmed and
case-insensitively, this project first); a unique id prefix. Ambiguity is an error that lists
the candidates, never a silent pick.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

from ..config.paths import is_transcript_name, project_dir, projects_dir
from ..errors import AmbiguousSessionError, CommandcodeError, SessionNotFoundError
from ..sessions.files import SessionFiles
from ..sessions.reader import Session, open_session
from ..sessions.refs import resolve_direct
from ..storage.ids import parse_iso

LISTING_CONCURRENCY = 10


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(session: Session) -> SessionSummary:
    """The listing fields of a session (format §9)."""
    return SessionSummary(
        id=session.id,
        name=session.name,
        created=session.created,
        modified=session.modified,
        message_count=session.message_count,
        first_message=session.first_message(),
        git_branch=session.git_branch,
        entrypoint=session.entrypoint,
        parent_session_id=session.parent_session_id,
        path=str(session.path),
        cwd=session.cwd,
        skipped_lines=len(session.skipped_lines),
    )


def transcripts_in(directory: Path) -> Iterator[Path]:
    """Transcript files in one project folder (sidecars without a transcript are ignored)."""
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in names:
        if is_transcript_name(name):
            path = directory / name
            if path.is_file():
                yield path


def project_dirs(*, all_projects: bool, cwd: str | os.PathLike[str]) -> list[Path]:
    """The project folders a listing covers."""
    if not all_projects:
        return [project_dir(cwd)]
    root = projects_dir()
    try:
        return sorted(path for path in root.iterdir() if path.is_dir())
    except FileNotFoundError:
        return []


def list_sessions(cwd: str | os.PathLike[str], *, include_headless: bool = False, all_projects: bool = False,
                  errors: list[str] | None = None) -> list[SessionSummary]:
    """Sessions of this directory's project (or every project), newest first.

    Headless (`-p`) sessions are left out unless `include_headless`. A transcript that cannot be
    opened is left out and described in `errors` (when given), never modified.
    """
    paths = [path for directory in project_dirs(all_projects=all_projects, cwd=cwd) for path in transcripts_in(directory)]

    def load(path: Path) -> SessionSummary | str:
        try:
            return summarize(open_session(path))
        except (CommandcodeError, OSError) as error:
            message = str(error)
            return message if message.startswith(f"{path}: ") else f"{path}: {message}"
        except Exception as error:
            return f"{path}: cannot be listed ({type(error).__name__}: {error})"

    summaries: list[SessionSummary] = []
    from concurrent.futures import ThreadPoolExecutor  # costs more to import than a small listing takes

    with ThreadPoolExecutor(max_workers=LISTING_CONCURRENCY) as pool:
        for result in pool.map(load, paths):
            if isinstance(result, str):
                if errors is not None:
                    errors.append(result)
            elif include_headless or result.entrypoint != "print":
                summaries.append(result)
    summaries.sort(key=_newest_first_key, reverse=True)
    return summaries


def _newest_first_key(summary: SessionSummary) -> tuple[float, float, str]:
    """Sort key: `modified` (parsed, not compared as text), then `created`, then the id, so sessions
    with equal times (a clone keeps its source's timestamps) always list in the same order."""
    return (_epoch(summary.modified), _epoch(summary.created), summary.id)


def _epoch(timestamp: str) -> float:
    moment = parse_iso(timestamp)
    if moment is None:
        return float("-inf")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def resolve_session(ref: str, cwd: str | os.PathLike[str]) -> SessionFiles:
    """The session a user's reference names.

    Raises:
        SessionNotFoundError: nothing matches.
        AmbiguousSessionError: a name or prefix matches several sessions.
    """
    reference = ref.strip()
    if not reference:
        raise SessionNotFoundError("empty session reference", hint="pass a session id, id prefix or name")
    direct = resolve_direct(reference, os.fspath(cwd))
    if direct is not None:
        return direct
    local = project_dir(cwd)
    candidates = [local, *[path for path in project_dirs(all_projects=True, cwd=cwd) if path != local]]
    for directory in candidates:
        transcript = directory / f"{reference}.jsonl"
        if "/" not in reference and transcript.is_file():
            return SessionFiles.for_transcript(transcript)
    for directories in ([local], candidates):
        named = _by_name(reference, directories)
        if len(named) == 1:
            return named[0]
        if len(named) > 1:
            raise AmbiguousSessionError(
                f"{len(named)} sessions are named {reference!r}: " + ", ".join(files.session_id for files in named),
                hint="pass the session id instead",
            )
    prefixed = [SessionFiles.for_transcript(path) for directory in candidates for path in transcripts_in(directory)
                if path.name.startswith(reference)]
    if len(prefixed) == 1:
        return prefixed[0]
    if len(prefixed) > 1:
        raise AmbiguousSessionError(
            f"{reference!r} is a prefix of {len(prefixed)} session ids: "
            + ", ".join(sorted(files.session_id for files in prefixed)[:8]),
            hint="type more characters of the id",
        )
    raise SessionNotFoundError(f"no session matches {reference!r}",
                               hint="run `commandcode sessions list --all --all-projects` to see every session")


def _by_name(reference: str, directories: list[Path]) -> list[SessionFiles]:
    wanted = reference.strip().casefold()
    found: list[SessionFiles] = []
    for directory in directories:
        for path in transcripts_in(directory):
            try:
                session = open_session(path)
            except (CommandcodeError, OSError):
                continue
            names = {session.name, session.meta.get("title"), session.meta.get("name")}
            if any(isinstance(name, str) and name.strip().casefold() == wanted for name in names):
                found.append(session.files)
    return found


def most_recent(cwd: Path, *, headless: bool) -> SessionFiles | None:
    """The newest session of this directory's project (`-c`); headless ones when `headless`."""
    sessions = list_sessions(cwd, include_headless=True)
    for summary in sessions:
        if (summary.entrypoint == "print") == headless:
            return SessionFiles.for_transcript(Path(summary.path))
    return None
