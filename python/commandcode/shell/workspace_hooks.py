"""What the interactive shell shows around a session's worktrees at its end:
`finish_worktrees(shell, made)` asks about the worktrees the launcher settles
(`launcher.start.settle_worktrees`: a clean one whose name was generated is removed with its
branch; one with changes, untracked files or commits asks whether to keep it (Enter, Ctrl+C and
Ctrl+D keep it; only choosing removal removes); a named clean one stays, `commandcode worktrees
remove NAME`) and says what became of each, one notice apiece.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..launcher.start import settle_worktrees

KEEP = "Keep it (resume there later; `commandcode worktrees remove NAME` removes it)"
DISCARD = "Remove it and its branch (the changes and commits are lost)"

if TYPE_CHECKING:
    from ..workspace.worktrees import Worktree
    from .slash import Shell


def _keep(shell: Shell, question: str) -> bool:
    """Whether the user keeps a worktree holding work: Enter, Ctrl+C and Ctrl+D keep it."""
    return shell.choose(question, [KEEP, DISCARD], default=0) != 1


def finish_worktrees(shell: Shell, made: Worktree | None) -> list[Worktree]:
    """Settles the session worktrees the shell leaves (see the module docstring) and returns the
    removed ones. A worktree git cannot remove is reported and kept."""
    removed: list[Worktree] = []
    for tree, outcome in settle_worktrees(shell.cwd, made, lambda question: _keep(shell, question)):
        if outcome == "removed":
            shell.notice(f"removed the worktree {tree.name} and its branch {tree.branch}")
            removed.append(tree)
        elif outcome == "kept":
            shell.notice(f"kept the worktree {tree.path} (branch {tree.branch}); "
                         f"remove it with: commandcode worktrees remove {tree.name}")
        else:
            shell.notice(f"the worktree {tree.name} was kept: {outcome}")
    return removed
