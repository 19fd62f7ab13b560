"""Finding sessions: listing a project's sessions and resolving a user's reference to one.

A reference is, in order: a path to a `.jsonl` transcript; an exact session id (this project,
then every project); a name (the latest `session_info` or `meta.title`, compared trimmed and
case-insensitively, this directory's sessions first); a unique id prefix (this directory's
sessions first). Ambiguity is an error that lists the candidates, never a silent pick.

"This directory's sessions" are those of its project folder that no other directory claims: two
folders can share one project folder (`a b` and `a_b` have the same slug, the real CLI's rule),
so the folder alone does not say whose a session is; the header `cwd` does (`belongs_here`). Listings (without `--all-projects`), `-c` and the
first tier of name and prefix lookups see only this directory's sessions; an exact id or a path
still opens a session of any directory (resuming elsewhere is allowed).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

from ..config.paths import is_transcript_name, node_text, project_dir, projects_dir
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
    here = os.fspath(cwd)

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
            elif (include_headless or result.entrypoint != "print") and (all_projects or belongs_here(result.cwd, os.path.dirname(result.path), here)):
                summaries.append(result)
    summaries.sort(key=_newest_first_key, reverse=True)
    return summaries


def same_directory(session_cwd: str, cwd: str | os.PathLike[str]) -> bool:
    """Whether a session's header `cwd` names the directory `cwd` (compared as paths, not
    resolved: the real CLI records `process.cwd()`, which is already the resolved getcwd)."""
    here = os.fspath(cwd)
    if session_cwd == here:
        return True
    # A cwd that is not UTF-8 is stored (and read back) with U+FFFD for its undecodable bytes.
    return os.path.normpath(node_text(session_cwd)) == os.path.normpath(node_text(here))


def belongs_here(session_cwd: str, folder: str | os.PathLike[str], cwd: str | os.PathLike[str]) -> bool:
    """Whether a session filed in project `folder` counts as one of directory `cwd`'s sessions.

    Yes when its header `cwd` is `cwd`. No when the header names another directory that files
    its sessions in this same folder (a slug twin: `a b` and `a_b`, `/Foo` and `/foo`): that
    directory sees it instead. A header `cwd` that would not be filed here at all (sessions
    copied in by hand, a data dir moved between machines, a forged or missing header) says
    nothing about whose it is, so the session stays visible in the folder it is in, as before.
    """
    if same_directory(session_cwd, cwd):
        return True
    from ..config.paths import project_root

    try:
        twin = os.path.basename(project_root(session_cwd)) == os.path.basename(os.fspath(folder))
    except (TypeError, ValueError):
        twin = False
    return not twin


def _is_here(path: Path, cwd: str) -> bool:
    """Whether the session at `path` counts as `cwd`'s (`belongs_here`; False when it cannot be opened)."""
    try:
        return belongs_here(open_session(path).cwd, path.parent, cwd)
    except (CommandcodeError, OSError):
        return False


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
    here = os.fspath(cwd)
    local = project_dir(cwd)
    candidates = [local, *[path for path in project_dirs(all_projects=True, cwd=cwd) if path != local]]
    for directory in candidates:
        transcript = directory / f"{reference}.jsonl"
        if "/" not in reference and os.path.isfile(transcript):  # a 300-byte reference is no file, not an error
            return SessionFiles.for_transcript(transcript)
    for directories, only_here in (([local], True), (candidates, False)):
        named = _by_name(reference, directories, here if only_here else None)
        if len(named) == 1:
            return named[0]
        if len(named) > 1:
            raise AmbiguousSessionError(
                f"{len(named)} sessions are named {reference!r}: " + ", ".join(files.session_id for files in named),
                hint="pass the session id instead",
            )
    matching = [path for directory in candidates for path in transcripts_in(directory) if path.name.startswith(reference)]
    prefixed = [SessionFiles.for_transcript(path) for path in matching if path.parent == local and _is_here(path, here)]
    if not prefixed:
        prefixed = [SessionFiles.for_transcript(path) for path in matching]
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


def _by_name(reference: str, directories: list[Path], cwd: str | None) -> list[SessionFiles]:
    """Sessions in `directories` named `reference` (only those started in `cwd`, when given)."""
    wanted = reference.strip().casefold()
    found: list[SessionFiles] = []
    for directory in directories:
        for path in transcripts_in(directory):
            try:
                session = open_session(path)
            except (CommandcodeError, OSError):
                continue
            if cwd is not None and not belongs_here(session.cwd, session.files.folder, cwd):
                continue
            # A list, not a set: a hostile meta's `title` may be any JSON value (a list or object
            # is unhashable), and one such session must not break lookups for its neighbours.
            names = [session.name, session.meta.get("title"), session.meta.get("name")]
            if any(isinstance(name, str) and name.strip().casefold() == wanted for name in names):
                found.append(session.files)
    return found


def most_recent(cwd: Path, *, headless: bool, unreadable: list[tuple[Path, str]] | None = None) -> SessionFiles | None:
    """The newest session started in this directory (`-c`); headless ones when `headless`.

    Transcripts that cannot be opened are passed over; `unreadable` (when given) receives each
    one's path and the reason."""
    errors: list[str] = []
    sessions = list_sessions(cwd, include_headless=True, errors=errors)
    if unreadable is not None and errors:
        paths = sorted(transcripts_in(project_dir(cwd)), key=lambda path: -len(str(path)))
        for error in errors:  # each is `{path}: {reason}`
            path = next((path for path in paths if error.startswith(f"{path}: ")), None)
            if path is not None:
                unreadable.append((path, error[len(f"{path}: "):]))
    for summary in sessions:
        if (summary.entrypoint == "print") == headless:
            return SessionFiles.for_transcript(Path(summary.path))
    return None
