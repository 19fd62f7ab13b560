"""The upkeep of the project folders a collection runs (`checkpoints/gc.py`: `sweep`, `doctor --gc`),
in one pass over `projects/`: each folder is listed once, its stale transcript temps are removed
(`stale_temps.py`) and its forks' recovery records settled (`unsynced.py`)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .stale_temps import remove_stale_temps
from .unsynced import settle_folder


def upkeep_projects(projects: Path, *, dry_run: bool = False) -> int:
    """Removes the stale transcript temps of every project folder of `projects` and settles its
    forks' records; returns how many temps were removed. A dry run only counts the temps and
    settles nothing (a settle may rewrite a fork). A folder that cannot be listed is passed over."""
    removed = 0
    with contextlib.suppress(OSError), os.scandir(projects) as entries:
        for entry in sorted(entries, key=lambda item: item.name):
            if not entry.is_dir(follow_symlinks=False):
                continue
            folder = Path(entry.path)
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            removed += remove_stale_temps(folder, names, dry_run=dry_run)[0]
            if not dry_run:
                settle_folder(folder, names)
    return removed
