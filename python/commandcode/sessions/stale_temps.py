"""Hidden transcript temp files a killed process left behind: finding and removing them.

A fork, a clone and a new session's first write build the transcript in a hidden temp file,
`.<sid>.jsonl.<pid>.tmp` beside it (`lineage.py`, `writer.py`), and link it into place. A
`kill -9` before the process unlinks it leaves the temp behind: a copy of the transcript (as
large as the source session) that nothing reads. The next fork or clone into a project folder,
`commandcode sweep` and `doctor --gc` remove them (`project_upkeep.py`).

A temp is stale only when the process its name carries is gone: a temp whose pid is alive (it
may still be writing it, or the pid was reused: then it stays until that process ends) is never
touched, nor is one of this very process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

_TEMP = re.compile(r"^\.[^/]+\.jsonl\.(\d+)\.tmp$")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if pid <= 0:
        return True  # not a pid we wrote: leave it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process (EPERM): alive
    return True


def stale_temps(folder: Path, names: Iterable[str] | None = None) -> Iterator[Path]:
    """The stale transcript temps directly in `folder` (regular files or not: never followed);
    `names`: the folder's entries when the caller has listed it already."""
    if names is None:
        try:
            names = os.listdir(folder)
        except OSError:
            return
    for name in sorted(names):
        match = _TEMP.match(name)
        if match is not None and not _alive(int(match.group(1))):
            yield folder / name


def remove_stale_temps(folder: Path, names: Iterable[str] | None = None, *, dry_run: bool = False) -> tuple[int, int]:
    """Removes the stale temps of one project folder (`names`: its entries, when listed already);
    returns `(count, bytes)` (a dry run only counts). One another process removes meanwhile is
    not counted."""
    count = size = 0
    for path in stale_temps(folder, names):
        try:
            length = os.lstat(path).st_size
            if not dry_run:
                os.unlink(path)
        except OSError:
            continue
        count, size = count + 1, size + length
    return count, size
