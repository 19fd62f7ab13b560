"""Starting a launch's session, for every front end (`-p` in `cli/run.py`, the shell in
`shell/start.py`): where it runs, the session itself, and what a launch does around it. The
front ends only present what these return.

- `place(launch, move=)`: where the session runs. With `-w/--worktree [NAME]`, a new session
  worktree (a generated name for a bare flag); else, for `-r REF` or `--session` naming a session
  that was working in a session worktree, that worktree (the session, its tools and its exit run
  there, not in the checkout the resume was typed in; the notice also says when it has been
  removed, `workspace/resume_place.py`); else the current folder. `move` changes the process's
  folder too (the shell: its exit settles the worktree it stands in).
- `start(launch, where, ...)`: opens the session, new, resumed (`-r`, `-c`, `--session`) or a
  fork of it (`--fork-session`), in the model `--model` names, with `--effort` and `--name`
  applied; if any of that fails, the worktree `place` made for it goes, with its branch.
- `rearm_share(agent)`: a resumed session that is shared gets its live page back.
- `start_auto_sweep(cwd)`: the daily automatic sweep (`workspace.retire.run.maybe_auto_sweep`: at
  most once a day, a background process that archives unless the settings chose deletion),
  checked in a thread so the launch never waits for it.
- `settle_worktrees(cwd, made, keep)`: at the end, the worktree the session ended in (and the
  one `-w` made, when the session moved on from it): a clean one whose name was generated is
  removed with its branch; one holding work is removed only if `keep` says no.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ..errors import CommandcodeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..agent.providers.base import Model
    from ..agent.runtime import AgentSession
    from ..config.context import ProjectContext
    from ..sessions.files import SessionFiles
    from ..workspace.worktrees import Worktree
    from .flags import Launch


class Place:
    """Where a launch's session runs: `cwd`, the worktree made for it (None but with `-w`), a
    notice about a resume moved into (or about) its session's worktree, and the session the
    launch's reference resolved to there (`files`: `start` opens it without resolving again),
    and the launch's project context (`project`, made once for `cwd`)."""

    __slots__ = ("cwd", "worktree", "notice", "files", "_project")

    def __init__(self, cwd: Path, worktree: Worktree | None = None, notice: str | None = None,
                 files: SessionFiles | None = None) -> None:
        self.cwd = cwd
        self.worktree = worktree
        self.notice = notice
        self.files = files
        self._project: ProjectContext | None = None

    @property
    def project(self) -> ProjectContext:
        """The project context of `cwd`, made once (the session, the worktree and the sweep share it)."""
        if self._project is None:
            from ..config.context import ProjectContext

            self._project = ProjectContext(self.cwd)
        return self._project

    def abandon(self) -> None:
        """The launch failed: the worktree made for it goes, with its branch."""
        if self.worktree is not None:
            from ..workspace.worktrees import abandon_fresh

            abandon_fresh(self.worktree)


def place(launch: Launch, *, move: bool) -> Place:
    """Where `launch` runs (module docstring).

    Raises:
        CommandcodeError: the worktree could not be made (not a repository, no commit, a bad name).
    """
    here = Path.cwd()
    if launch.worktree is not None:
        from ..workspace.worktrees import create_worktree

        made = create_worktree(here, launch.worktree or None)  # the main checkout's settings say its base
        if move:
            os.chdir(made.path)
        return Place(made.path, made)
    reference = launch.resume or launch.session
    if not reference or not move:
        return Place(here)
    from ..agent.resume import session_target
    from ..catalog.listing import resolve_session
    from ..workspace.resume_place import resume_place

    try:
        files = resolve_session(reference, here) if launch.resume else session_target(reference, here)
    except CommandcodeError:
        return Place(here)  # the start reports it
    folder, notice = resume_place(files.transcript, here)
    if folder is not None:
        os.chdir(folder)
        here = Path.cwd()
    return Place(here, None, notice, files)


def start(launch: Launch, where: Place, *, entrypoint: str | None, notify: Callable[[str], None],
          model: Model | None = None, opened: Callable[[AgentSession], None] | None = None) -> AgentSession:
    """The launch's session, open (its writer held: the caller closes it), in `where.cwd`:
    `model` if the caller resolved `--model` already, else the one it names (None: the session's,
    or config.json's). `opened` runs once the session exists, before `--effort` and `--name` are
    applied (`-p` reports the session there). A failure closes the session and abandons `where`.

    Raises:
        CommandcodeError: no such session, an unknown model or effort, a taken name, ...
        OSError: the session could not be made on disk.
    """
    from ..agent.providers.registry import resolve_model
    from ..agent.runtime import AgentSession

    try:
        if model is None and launch.model:
            model = resolve_model(launch.model, warn=notify)
        agent = AgentSession.start(where.cwd, reference=launch.resume or launch.session, resolved=where.files,
                                   continue_last=launch.continue_last, persist=not launch.no_session, model=model,
                                   entrypoint=entrypoint, notify=notify, permission_mode=launch.mode,
                                   fork=launch.fork_session, project=where.project)
        agent.__enter__()
        try:
            if opened is not None:
                opened(agent)
            if launch.effort:
                agent.models.set_effort(launch.effort)
            if launch.name and launch.name.strip():  # a taken or unusable name refuses the launch
                agent.rename(launch.name)
        except BaseException:
            agent.close()
            raise
    except BaseException:
        where.abandon()
        raise
    return agent


def rearm_share(agent: AgentSession, notice: Callable[[str], None] | None = None) -> str | None:
    """A resumed session that is shared gets its live page back (`sharing.client.rearm`: a server
    that lost the share serves it again; a share on a team service re-arms in the background and
    reports through `notice`); returns the notice saying why it is not live, if any."""
    if agent.handle.is_new or not agent.files.share.exists():
        return None
    from ..sharing.client import rearm

    return rearm(agent.files, notice, agent.handle.project)


def start_auto_sweep(cwd: Path, keep: Sequence[str] = ()) -> threading.Thread:
    """Checks (in a daemon thread) whether the daily sweep is due and starts it if so, leaving the
    sessions `keep` names (the one the shell shows) alone."""
    def check() -> None:
        try:
            from ..workspace.retire.run import maybe_auto_sweep

            maybe_auto_sweep(cwd, keep=keep)
        except Exception:  # housekeeping never disturbs the launch
            pass

    thread = threading.Thread(target=check, name="auto-sweep", daemon=True)
    thread.start()
    return thread


def settle_worktrees(cwd: Path, made: Worktree | None,
                     keep: Callable[[str], bool]) -> Iterator[tuple[Worktree, str | CommandcodeError]]:
    """Settles the session worktrees a launch leaves (module docstring), one at a time as the
    caller iterates: each one with its outcome, "removed", "kept", or the error that kept it (git
    could not remove it). The process moves to each one's main checkout first (never stand in a
    folder that is about to go)."""
    from ..workspace.worktrees import finish_worktree, worktree_of

    trees: list[Worktree] = []
    for candidate in (worktree_of(cwd), made):
        if candidate is not None and all(os.path.realpath(candidate.path) != os.path.realpath(tree.path) for tree in trees):
            trees.append(candidate)
    for tree in trees:
        os.chdir(tree.main_root)
        try:
            outcome: str | CommandcodeError = finish_worktree(tree, headless=False, keep=keep)
        except CommandcodeError as error:
            outcome = error
        yield tree, outcome
