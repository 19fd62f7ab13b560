"""Resolving and resuming a session, the same for every front end (`-r`, `-c`, `--session`, the
picker, `/resume`).

`plan_resume(...)` finds the session and says what resuming it involves, without opening it:

- which session: `-r REF` an exact id, then a name (trimmed, case-insensitive; two sessions with
  that name is an error listing both), then the other references `resolve_session` takes; `-c`
  the newest session of this directory (with `-p`, the newest headless one); `--session PATH|PREFIX`
  a `.jsonl` path, resumed where it is (and appended there), else a unique id prefix across all
  projects (an ambiguous one lists the candidates);
- what it restores (`ResumePlan.model`, `effort`, `goal`, `permission_mode`): the meta's model
  unless the launch names one (an in-session `/resume` always adopts it); effort and goal; the
  permission mode only from `-c` or `-r` at launch, and never plan or bypass mode;
- what the front end must ask first: `missing_cwd` (the session's directory is gone: offer
  `relink`), `locked_by` (another process is writing it: offer a read-only view or a fork; `-p`
  refuses), `offer_summary` (over 100,000 tokens and idle over an hour: resume from a summary,
  compacting first, or in full).

`ResumePlan.open(**options)` then makes the `AgentSession`; `read_only(**options)` one that
writes nothing and takes no lock. `run_dir` is where the session runs: its own directory when it
still exists (picking a session of another directory resumes it there), else the caller's.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.listing import list_sessions, resolve_session
from ..config.paths import is_transcript_name, projects_dir
from ..errors import AmbiguousSessionError, SessionLockedError, SessionNotFoundError, UsageError
from ..sessions.files import SessionFiles
from ..sessions.format import MIN_ID_PREFIX, read_header_cwd
from ..sessions.lock import lock_holder
from ..sessions.meta import read_meta
from ..sessions.reader import open_session

if TYPE_CHECKING:
    from .runtime import AgentSession

SUMMARY_TOKENS = 100_000
SUMMARY_IDLE_S = 3600
NOT_RESTORED_MODES = frozenset({"plan", "bypassPermissions", "bypass"})
SOURCES = ("resume", "continue", "session", "picker", "slash")


class ResumePlan:
    """A session chosen for resuming, what it restores and what must be asked first."""

    def __init__(self, files: SessionFiles, cwd: Path, *, source: str, model: str | None, effort: str | None,
                 goal: object, permission_mode: str | None, recorded_cwd: str | None, locked_by: int | None,
                 offer_summary: bool, tokens: int) -> None:
        self.files = files
        self.cwd = cwd
        self.source = source
        self.model = model
        self.effort = effort
        self.goal = goal
        self.permission_mode = permission_mode
        self.recorded_cwd = recorded_cwd
        self.locked_by = locked_by
        self.offer_summary = offer_summary
        self.tokens = tokens

    @property
    def missing_cwd(self) -> str | None:
        """The session's recorded directory when it no longer exists (offer `relink`)."""
        if self.recorded_cwd and os.path.isabs(self.recorded_cwd) and not os.path.isdir(self.recorded_cwd):
            return self.recorded_cwd
        return None

    @property
    def run_dir(self) -> Path:
        """Where the resumed session runs: its own directory when it exists, else the caller's."""
        if self.recorded_cwd and os.path.isabs(self.recorded_cwd) and os.path.isdir(self.recorded_cwd):
            return Path(self.recorded_cwd)
        return self.cwd

    def relink(self) -> ResumePlan:
        """Moves the session to the caller's directory's project folder (see `sessions.relink`)."""
        from ..sessions.relink import relink

        self.files = relink(self.files, os.fspath(self.cwd))
        self.recorded_cwd = os.fspath(self.cwd)
        return self

    def open(self, **options: Any) -> AgentSession:
        """The `AgentSession` resuming it (in `run_dir`). `options` are `AgentSession`'s.

        Raises:
            SessionLockedError: another process is writing it (the holder's pid and a hint).
        """
        from .runtime import AgentSession

        holder = lock_holder(self.files.transcript)
        if holder is not None and holder != os.getpid():
            raise SessionLockedError(f"session {self.files.session_id} is open for writing by process {holder}",
                                     holder_pid=holder,
                                     hint="close it there, or resume it read-only or as a fork from the picker")
        return AgentSession(self.files, self.run_dir, is_new=False, **options)

    def read_only(self, **options: Any) -> AgentSession:
        """An `AgentSession` on it that writes nothing and takes no lock (the view offered while
        another process writes it)."""
        from .runtime import AgentSession

        options["persist"] = False
        return AgentSession(self.files, self.run_dir, is_new=False, **options)


def plan_resume(cwd: Path, *, reference: str | None = None, continue_last: bool = False,
                session_option: str | None = None, files: SessionFiles | None = None, print_mode: bool = False,
                model_override: str | None = None, source: str | None = None,
                now: float | None = None) -> ResumePlan:
    """Finds the session to resume and plans it (see the module docstring). Exactly one of
    `reference` (`-r`), `continue_last` (`-c`), `session_option` (`--session`) or `files` (a
    picked session) names it; `source` is `"picker"` or `"slash"` for a picked one.

    Raises:
        UsageError: none or several of them.
        SessionNotFoundError, AmbiguousSessionError: the reference names no single session.
    """
    chosen = [value for value in (reference, continue_last or None, session_option, files) if value]
    if len(chosen) != 1:
        raise UsageError("name one session to resume: -r REF, -c or --session PATH|PREFIX")
    if reference:
        how, target = "resume", resolve_session(reference, cwd)
    elif continue_last:
        how, target = "continue", continue_target(cwd, headless=print_mode)
    elif session_option:
        how, target = "session", session_target(session_option, cwd)
    else:
        assert files is not None
        how, target = source or "picker", files
    return _plan(target, cwd, how, model_override, time.time() if now is None else now)


def continue_target(cwd: Path, *, headless: bool) -> SessionFiles:
    """`-c`: the newest session of this directory (headless ones with `-p`, else interactive ones)."""
    from ..catalog.listing import most_recent

    found = most_recent(cwd, headless=headless)
    if found is None:
        kind = "headless " if headless else ""
        raise SessionNotFoundError(f"no {kind}session to continue in this directory",
                                   hint="run `commandcode sessions list --all` to see every session")
    return found


def session_target(value: str, cwd: Path) -> SessionFiles:
    """`--session PATH|PREFIX`: a transcript path (resumed where it is), else a unique id prefix
    across every project."""
    text = value.strip()
    if not text:
        raise UsageError("--session needs a transcript path or a session id prefix")
    as_path = Path(text).expanduser()
    if text.endswith(".jsonl") or os.sep in text:
        if not as_path.is_file():
            raise SessionNotFoundError(f"no transcript at {as_path}")
        if not is_transcript_name(as_path.name):
            raise UsageError(f"{as_path} is a session sidecar, not a transcript")
        return SessionFiles.for_transcript(os.path.abspath(as_path))
    if len(text) < MIN_ID_PREFIX:
        raise UsageError(f"--session {text!r} is too short for an id prefix",
                         hint=f"give at least {MIN_ID_PREFIX} characters of the session id, or a transcript path")
    matches = []
    try:
        folders = sorted(entry.path for entry in os.scandir(projects_dir()) if entry.is_dir())
    except OSError:
        folders = []
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        matches += [os.path.join(folder, name) for name in names if is_transcript_name(name) and name.startswith(text)]
    if not matches:
        raise SessionNotFoundError(f"no session id starts with {text!r}",
                                   hint="run `commandcode sessions list --all --all-projects` to see every session")
    if len(matches) > 1:
        raise AmbiguousSessionError(f"{text!r} is a prefix of {len(matches)} sessions: " + ", ".join(
            f"{os.path.basename(path)[:-6]} ({os.path.basename(os.path.dirname(path))})" for path in sorted(matches)[:8]),
            hint="type more characters of the id")
    return SessionFiles.for_transcript(matches[0])


def _plan(files: SessionFiles, cwd: Path, how: str, model_override: str | None, now: float) -> ResumePlan:
    meta = read_meta(files.meta)
    session = open_session(files.transcript)
    meta_model = meta.get("model") if isinstance(meta.get("model"), str) else None
    model = meta_model or session.model
    if model_override and how != "slash":  # an in-session /resume always adopts the session's model
        model = model_override
    mode = meta.get("permissionMode")
    restorable = how in ("continue", "resume") and isinstance(mode, str) and mode not in NOT_RESTORED_MODES
    tokens = _tokens(session)
    try:
        idle = now - os.stat(files.transcript).st_mtime
    except OSError:
        idle = 0.0
    return ResumePlan(files, cwd, source=how, model=model, effort=session.effort, goal=meta.get("goal"),
                      permission_mode=mode if restorable else None, recorded_cwd=read_header_cwd(files.transcript),
                      locked_by=_other_holder(files), offer_summary=tokens > SUMMARY_TOKENS and idle > SUMMARY_IDLE_S,
                      tokens=tokens)


def _tokens(session: Any) -> int:
    """The context's token estimate; a cheap bound first (a file under 4 bytes per token over the
    threshold cannot reach it), so small sessions are not rebuilt for the question."""
    try:
        if os.stat(session.path).st_size < SUMMARY_TOKENS:
            return 0
        from ..sessions.tokens import estimate_tokens

        return int(estimate_tokens(session.context().messages))
    except (OSError, ValueError):
        return 0


def _other_holder(files: SessionFiles) -> int | None:
    holder = lock_holder(files.transcript)
    return holder if holder is not None and holder != os.getpid() else None


def find_by_name(name: str, cwd: Path) -> list[SessionFiles]:
    """Every session (any project) whose name, title or meta name is `name` (trimmed, case-insensitive)."""
    wanted = name.strip().casefold()
    return [SessionFiles.for_transcript(row.path) for row in list_sessions(cwd, include_headless=True, all_projects=True)
            if any(alias.strip().casefold() == wanted for alias in row.aliases)]
