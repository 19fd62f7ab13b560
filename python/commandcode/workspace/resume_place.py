"""Where a resumed session runs: a session that was working in a session worktree resumes in
that worktree, not in the checkout the resume was typed in (its files, its branch and its tool
calls are there); when that worktree has been removed, the resume says so.

`resume_place(transcript, cwd)` answers with the folder to run in (None: `cwd`, as for any other
session) and the notice to show.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..sessions.format import read_header_cwd
from .worktrees import worktree_of

WORKTREES_PART = os.sep + os.path.join(".commandcode", "worktrees") + os.sep


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def resume_place(transcript: str | Path, cwd: Path) -> tuple[Path | None, str | None]:
    """(the worktree to resume in, or None; a notice, or None) for the session of `transcript`
    resumed from `cwd`."""
    try:
        recorded = read_header_cwd(transcript)
    except OSError:
        return None, None
    if not recorded or not os.path.isabs(recorded) or _inside(os.fspath(cwd), recorded):
        return None, None
    if not os.path.isdir(recorded):
        if WORKTREES_PART not in recorded + os.sep:
            return None, None  # a plain folder that is gone: the resume's relink question covers it
        main = recorded.split(WORKTREES_PART, 1)[0]
        name = recorded.split(WORKTREES_PART, 1)[1].strip(os.sep).split(os.sep)[0]
        return None, (f"this session worked in the worktree {recorded}, which has been removed; it resumes here in "
                      f"{cwd}, without that worktree's uncommitted changes"
                      + (f" (its commits may remain on the branch worktree-{name}: git -C {main} log worktree-{name})"
                         if name else ""))
    tree = worktree_of(recorded)
    if tree is None:
        return None, None  # another plain folder: resumed here, as Claude Code does
    return Path(recorded), (f"resuming in the session's worktree {tree.path} (branch {tree.branch}), where it was "
                            f"working, not in {cwd}")
