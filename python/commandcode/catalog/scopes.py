"""Which directories a listing covers: this one, every worktree of its git repository, or every
project on the machine. Worktrees come from `git worktree list --porcelain` (no git, or not a
repository: just this directory)."""

from __future__ import annotations

import os
import subprocess

GIT_TIMEOUT_S = 10


def worktree_paths(cwd: str | os.PathLike[str]) -> list[str]:
    """The working directories of every worktree of `cwd`'s repository (`cwd` itself first), or
    just `cwd` outside a repository."""
    here = os.fspath(cwd)
    try:
        completed = subprocess.run(["git", "-C", here, "worktree", "list", "--porcelain", "-z"], capture_output=True,
                                   timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return [here]
    if completed.returncode != 0:
        return [here]
    found = [here]
    for field in completed.stdout.split(b"\0"):
        if field.startswith(b"worktree "):
            path = os.fsdecode(field[len(b"worktree "):])
            if path not in found:
                found.append(path)
    return found
