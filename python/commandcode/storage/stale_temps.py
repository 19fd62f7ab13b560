"""The temp files a writer of ours killed mid-write left behind, and their removal at the next open.

Every write of ours goes through a temp file beside its target, renamed (or linked) into place:
`atomic_write`'s `<name>.<pid>.tmp` (checkpoints file, sidecars, a run's meta), a new
transcript's `.<name>.<pid>.tmp` (`sessions/writer.py`), and, in a user's project, the edit
tools' `.<name>.<pid>.<nonce>.tmp` (`replace_file`). A process killed between the create and the
rename leaves it. `remove_stale` deletes one only when it is provably ours and stale: a regular
file whose name is one of these patterns for a target the caller owns (the session's files, a
path an edit tool backed up), and whose pid names no running process (`process_exists`: ours,
another user's, or one that answers, is kept). Anything else, a user's `notes.1.tmp` beside an
unrelated file included, is left alone; `unlink` never follows a link.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable

from .durable import process_exists

_REPLACE = re.compile(r"\.(?P<target>.+)\.(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp")
_HIDDEN = re.compile(r"\.(?P<target>.+)\.(?P<pid>[0-9]+)\.tmp")
_ATOMIC = re.compile(r"(?P<target>[^.].*)\.(?P<pid>[0-9]+)\.tmp")


def temporary_of(name: str, *, project: bool) -> tuple[str, int] | None:
    """(target name, writer's pid) when `name` has the shape of one of our temp files, else None:
    in a user's project only `replace_file`'s (which names at most the first 200 characters of
    its target), in the data dir only `atomic_write`'s and a new transcript's."""
    for pattern in (_REPLACE,) if project else (_HIDDEN, _ATOMIC):
        found = pattern.fullmatch(name)
        if found is not None and found["pid"].isascii():
            return found["target"], int(found["pid"])
    return None


def remove_stale(folder: str | os.PathLike[str], owns: Callable[[str], bool], *, project: bool = False) -> list[str]:
    """Removes the temp files in `folder` (a user's `project` folder, or one of the data dir)
    whose target `owns` accepts and whose writer is gone; returns their names. Never raises:
    what cannot be listed or removed stays."""
    try:
        names = [name for name in os.listdir(folder) if name.endswith(".tmp")]  # most names: no pattern to try
    except (OSError, ValueError):  # ValueError: a folder name the file system cannot encode
        return []
    return remove_named(folder, names, owns, project=project)


def remove_named(folder: str | os.PathLike[str], names: Iterable[str], owns: Callable[[str], bool], *,
                 project: bool = False) -> list[str]:
    """`remove_stale` of the entries `names` of `folder` (listed by the caller, e.g. many folders
    at once, natively): each is removed only when it is a temp file of ours as `remove_stale`
    says (a regular file, never followed); returns the names removed."""
    removed: list[str] = []
    for name in names:
        parsed = temporary_of(name, project=project)
        if parsed is None or not owns(parsed[0]) or process_exists(parsed[1]):
            continue
        path = os.path.join(folder, name)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            os.unlink(path)
        except (OSError, ValueError):
            continue
        removed.append(name)
    return removed
