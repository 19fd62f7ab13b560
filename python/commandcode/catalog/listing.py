"""Finding sessions: listing a project's sessions and resolving a user's reference to one.

A reference is, in order: a path to a `.jsonl` transcript; an exact session id (this project,
then every project); a name (the latest `session_info` or `meta.title`, compared trimmed and
case-insensitively, this directory's sessions first); a unique id prefix of at least
`MIN_ID_PREFIX` (4) characters (this directory's sessions first). Ambiguity is an error that lists the candidates, never a silent pick.

"This directory's sessions" are those of its project folder that no other directory claims: two
folders can share one project folder (`a b` and `a_b` have the same slug, the real CLI's rule),
so the folder alone does not say whose a session is; the header `cwd` does (`belongs_here`). Listings (without `--all-projects`), `-c` and the
first tier of name and prefix lookups see only this directory's sessions; an exact id or a path
still opens a session of any directory (resuming elsewhere is allowed).
"""

from __future__ import annotations

import os

from ..config.env import catalog_enabled
from ..config.paths import as_path, is_transcript_name, node_text, project_dir, projects_dir, sessions_folder
from ..errors import CommandcodeError, SessionNotFoundError
from ..sessions.files import SessionFiles
from ..sessions.format import MIN_ID_PREFIX, read_header_cwd
from ..sessions.reader import open_session
from ..sessions.refs import resolve_direct
from .summary import SessionSummary, summarize, with_lineage
from .times import sort_key

TYPE_CHECKING = False
if TYPE_CHECKING:  # `pathlib` costs more to import than a warm listing takes: built only when needed
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Literal

__all__ = ["SessionSummary", "list_sessions", "most_recent", "resolve_session", "scan_sessions", "summarize"]


def transcripts_in(directory: Path) -> Iterator[Path]:
    """Transcript files in one project folder (sidecars without a transcript are ignored; a folder
    that cannot be listed has none)."""
    try:
        names = os.listdir(directory)
    except OSError:
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
    except OSError:
        return []


class Scope:
    """The folders a listing reads, and which of their sessions it keeps: those started in one of
    `directories` (None: every project, all kept)."""

    def __init__(self, cwd: str | os.PathLike[str], *, all_projects: bool = False, worktrees: bool = False) -> None:
        self.cwd = os.fspath(cwd)
        if all_projects:
            self.directories: list[str] | None = None
            self.folders = [str(path) for path in project_dirs(all_projects=True, cwd=cwd)]
        else:
            if worktrees:
                from .scopes import worktree_paths

                self.directories = worktree_paths(cwd)
            else:
                self.directories = [self.cwd]
            self.folders = list(dict.fromkeys(sessions_folder(directory) for directory in self.directories))

    def keeps(self, summary: SessionSummary) -> bool:
        return self.keeps_path(summary.path, summary.cwd)

    def keeps_path(self, path: str, cwd: str) -> bool:
        """Whether the session of transcript `path`, started in `cwd`, is in the scope."""
        if self.directories is None:
            return True
        folder = os.path.dirname(path)
        return any(belongs_here(cwd, folder, directory) for directory in self.directories)


def list_sessions(cwd: str | os.PathLike[str], *, include_headless: bool | Literal["only"] = False, all_projects: bool = False,
                  errors: list[str] | None = None, limit: int | None = None, branch: str | None = None,
                  worktrees: bool = False, use_catalog: bool | None = None,
                  counted: Callable[[SessionSummary], bool] | None = None) -> list[SessionSummary]:
    """Sessions of this directory (or of every worktree of its repository, or of every project),
    newest first; at most `limit`; only those started on git branch `branch` when given.

    Headless (`-p`) sessions are left out unless `include_headless` (with "only", only they, and
    the transcripts that cannot be opened, are listed). The SQLite catalog answers
    when it can (`use_catalog`, default: unless `COMMANDCODE_CATALOG=off`), else the folders are
    scanned; both give the same rows. A transcript that cannot be opened is listed as a damaged row
    and described in `errors` (when given); nothing is ever modified. With `counted`, only the
    rows it accepts count toward `limit` (the rows before them are listed too).
    """
    scope = Scope(cwd, all_projects=all_projects, worktrees=worktrees)
    problems: list[str] = [] if errors is None else errors
    if use_catalog is None:
        use_catalog = catalog_enabled()
    if use_catalog:
        from .cached import catalog_rows

        rows = catalog_rows(scope, headless=include_headless, branch=branch, limit=limit, problems=problems,
                            counted=counted)
        if rows is not None:
            return rows
    return scan_sessions(scope, include_headless=include_headless, branch=branch, limit=limit, problems=problems,
                         counted=counted)


def scan_sessions(scope: Scope, *, include_headless: bool | Literal["only"] = False, branch: str | None = None,
                  limit: int | None = None, problems: list[str] | None = None,
                  counted: Callable[[SessionSummary], bool] | None = None) -> list[SessionSummary]:
    """`list_sessions` by scanning the folders (no catalog): every transcript summarized in one
    native pass, in parallel."""
    paths: list[str] = []
    for folder in scope.folders:
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            continue
        except OSError as error:
            if problems is not None:
                problems.append(f"{folder}: cannot be listed ({error.strerror or error}); its sessions are not shown")
            continue
        paths += [os.path.join(folder, name) for name in names
                  if is_transcript_name(name) and os.path.isfile(os.path.join(folder, name))]

    from .native_summary import summarize_paths

    every = [summary for summary, _ in summarize_paths(paths)]
    known = {summary.id: summary for summary in every}
    kept = []
    for summary in every:
        if summary.damaged is not None and not summary.cwd:
            if problems is not None:
                problems.append(f"{summary.path}: {summary.damaged}")
            if scope.directories is not None and os.path.dirname(summary.path) not in scope.folders:
                continue
        elif not scope.keeps(summary) or (include_headless == "only" and summary.entrypoint != "print"):
            continue
        if (include_headless or not summary.headless) and (branch is None or summary.git_branch == branch):
            kept.append(summary)
    kept.sort(key=newest_first_key, reverse=True)
    return with_lineage(first_rows(kept, limit, counted), known)


def first_rows(rows: list[SessionSummary], limit: int | None,
               counted: Callable[[SessionSummary], bool] | None) -> list[SessionSummary]:
    """`rows` down to the `limit`th that `counted` accepts (every row counts without it)."""
    if limit is None:
        return rows
    if counted is None:
        return rows[:limit]
    found = 0
    for number, summary in enumerate(rows):
        if counted(summary):
            found += 1
            if found >= limit:
                return rows[:number + 1]
    return rows


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
    try:
        twin = os.path.basename(sessions_folder(session_cwd)) == os.path.basename(os.fspath(folder))
    except (TypeError, ValueError):
        twin = False
    return not twin


def _is_here(path: Path, cwd: str) -> bool:
    """Whether the session at `path` counts as `cwd`'s (`belongs_here`; False when it cannot be
    opened). The header's `cwd` is read from its first line; only a transcript with no header
    line is opened (its header is synthesized), so an id prefix never waits for a scan."""
    recorded = read_header_cwd(path)
    if recorded is not None:
        return belongs_here(recorded, path.parent, cwd)
    try:
        return belongs_here(open_session(path).cwd, path.parent, cwd)
    except (CommandcodeError, OSError):
        return False


def newest_first_key(summary: SessionSummary) -> tuple[float, float, str]:
    """Sort key: `modified` (parsed, not compared as text), then `created`, then the id, so sessions
    with equal times (a clone keeps its source's timestamps) always list in the same order."""
    return (sort_key(summary.modified), sort_key(summary.created), summary.id)


def resolve_session(ref: str, cwd: str | os.PathLike[str]) -> SessionFiles:
    """The session a user's reference names.

    Raises:
        SessionNotFoundError: nothing matches.
        AmbiguousSessionError: a name or prefix matches several sessions.
    """
    from ..sessions.resolve import as_path_refused, one_named, one_prefixed, prefixed, stripped

    reference = stripped(ref, hint="pass a session id, id prefix or name")
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
    # ids win over names: a unique id prefix is never shadowed by a session's name
    matching = prefixed(reference, [path for directory in candidates for path in transcripts_in(directory)],
                        lambda path: path.name)
    by_prefix = [SessionFiles.for_transcript(path) for path in matching if path.parent == local and _is_here(path, here)]
    if not by_prefix:
        by_prefix = [SessionFiles.for_transcript(path) for path in matching]
    if len(by_prefix) == 1:
        return by_prefix[0]
    for directories, only_here in (([local], True), (candidates, False)):
        found = one_named(reference, _by_name(reference, directories, here if only_here else None), _session_id)
        if found is not None:
            return found
    one_prefixed(reference, by_prefix, _session_id)  # several: which they are
    everything = "run `commandcode sessions list --all --all-projects` to see every session"
    as_path_refused(reference, hint=everything)
    if len(reference) < MIN_ID_PREFIX:
        raise SessionNotFoundError(f"no session matches {reference!r}",
                                   hint=f"an id prefix needs at least {MIN_ID_PREFIX} characters; shorter is a name")
    raise SessionNotFoundError(f"no session matches {reference!r}", hint=everything)


def _session_id(files: SessionFiles) -> str:
    return files.session_id


def _by_name(reference: str, directories: list[Path], cwd: str | None) -> list[SessionFiles]:
    """Sessions in `directories` named `reference` (only those started in `cwd`, when given), from
    the listing rows (the catalog's, when it can be used): a name is the latest `session_info`,
    `meta.title` or `meta.name`."""
    from ..sessions.resolve import named

    folders = {str(directory) for directory in directories}
    here = cwd if cwd is not None else os.fspath(directories[0])
    rows = [row for row in list_sessions(here, include_headless=True, all_projects=cwd is None)
            if os.path.dirname(row.path) in folders and row.cwd]
    return [SessionFiles.for_transcript(row.path) for row in named(reference, rows, lambda row: row.aliases)]


def most_recent(cwd: Path, *, headless: bool, unreadable: list[tuple[Path, str]] | None = None) -> SessionFiles | None:
    """The newest session started in this directory (`-c`); headless ones when `headless`.

    Transcripts that cannot be opened are passed over; `unreadable` (when given) receives each
    one's path and the reason. Rows are read newest first only down to the one picked."""
    def resumable(summary: SessionSummary) -> bool:
        return not (summary.damaged is not None and not summary.cwd) and (summary.entrypoint == "print") == headless

    for summary in list_sessions(cwd, include_headless="only" if headless else True, limit=1, counted=resumable):
        if summary.damaged is not None and not summary.cwd:  # it could not be opened
            if unreadable is not None:
                unreadable.append((as_path(summary.path), summary.damaged))
            continue
        if (summary.entrypoint == "print") == headless:  # -c's own rule: by how it was started
            return SessionFiles.for_transcript(summary.path)
    return None
