"""What the interactive shell does around a session's workspace, at its start and its end.

- `enter_worktree(launch)`: with `-w/--worktree [NAME]`, creates the session worktree (a
  generated name for a bare flag) and moves the process into it; the shell's session starts
  there. Returns the folder to start in, and the worktree made (None without `-w`).
- `enter_resumed_worktree(launch)`: with `-r REF` or `--session` naming a session that was
  working in a session worktree, moves the process into that worktree (the session, its tools
  and its exit run there, not in the checkout the resume was typed in); returns the notice to
  show, which also says when that worktree has been removed (`workspace/resume_place.py`).
- `start_auto_sweep(cwd)`: the daily automatic sweep (`workspace.retire.run.maybe_auto_sweep`: at
  most once a day, a background process that archives unless the settings chose deletion),
  checked in a thread so the prompt never waits for it.
- `finish_worktrees(shell, made)`: on exit, the worktree the session ended in (and the one `-w`
  made, when `/worktree` moved on from it): a clean one whose name was generated is removed with
  its branch; one with changes, untracked files or commits asks whether to keep it (Enter,
  Ctrl+C and Ctrl+D keep it; only choosing removal removes); a named clean one stays (`commandcode worktrees remove NAME`).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CommandcodeError

KEEP = "Keep it (resume there later; `commandcode worktrees remove NAME` removes it)"
DISCARD = "Remove it and its branch (the changes and commits are lost)"

if TYPE_CHECKING:
    from ..workspace.worktrees import Worktree
    from .slash import Shell


def enter_worktree(launch: Any) -> tuple[Path, Worktree | None]:
    """The folder the shell's session starts in (see the module docstring).

    Raises:
        CommandcodeError: the worktree could not be made (not a repository, no commit, a bad name).
    """
    if getattr(launch, "worktree", None) is None:
        return Path.cwd(), None
    from ..workspace.worktrees import create_worktree

    made = create_worktree(Path.cwd(), launch.worktree or None)
    os.chdir(made.path)
    return made.path, made


def enter_resumed_worktree(launch: Any) -> str | None:
    """The notice of a resume into (or about) a session worktree (see the module docstring)."""
    reference = getattr(launch, "resume", None) or getattr(launch, "session", None)
    if not reference or getattr(launch, "worktree", None) is not None:
        return None
    from ..agent.resume import session_target
    from ..catalog.listing import resolve_session
    from ..workspace.resume_place import resume_place

    here = Path.cwd()
    try:
        files = resolve_session(reference, here) if getattr(launch, "resume", None) else session_target(reference, here)
    except CommandcodeError:
        return None  # the launch itself reports it
    folder, notice = resume_place(files.transcript, here)
    if folder is not None:
        os.chdir(folder)
    return notice


def start_auto_sweep(cwd: Path) -> threading.Thread:
    """Checks (in a daemon thread) whether the daily sweep is due and starts it if so."""
    def check() -> None:
        try:
            from ..workspace.retire.run import maybe_auto_sweep

            maybe_auto_sweep(cwd)
        except Exception:  # housekeeping never disturbs the shell
            pass

    thread = threading.Thread(target=check, name="auto-sweep", daemon=True)
    thread.start()
    return thread


def _keep(shell: Shell, question: str) -> bool:
    """Whether the user keeps a worktree holding work: Enter, Ctrl+C and Ctrl+D keep it."""
    return shell.choose(question, [KEEP, DISCARD], default=0) != 1


def finish_worktrees(shell: Shell, made: Worktree | None) -> list[Worktree]:
    """Settles the session worktrees the shell leaves (see the module docstring); each outcome is
    one notice, and the removed ones are returned. A worktree git cannot remove is reported and kept."""
    from ..workspace.worktrees import finish_worktree, worktree_of

    trees: list[Worktree] = []
    for candidate in (worktree_of(shell.cwd), made):
        if candidate is not None and all(os.path.realpath(candidate.path) != os.path.realpath(tree.path) for tree in trees):
            trees.append(candidate)
    removed: list[Worktree] = []
    for tree in trees:
        os.chdir(tree.main_root)  # never stand in a folder that is about to go
        try:
            outcome = finish_worktree(tree, headless=False, keep=lambda question: _keep(shell, question))
        except CommandcodeError as error:
            shell.notice(f"the worktree {tree.name} was kept: {error}")
            continue
        if outcome == "removed":
            shell.notice(f"removed the worktree {tree.name} and its branch {tree.branch}")
            removed.append(tree)
        else:
            shell.notice(f"kept the worktree {tree.path} (branch {tree.branch}); "
                         f"remove it with: commandcode worktrees remove {tree.name}")
    return removed
