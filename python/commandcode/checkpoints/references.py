"""Objects no checkpoint needs any more: finding every checkpoints file, and sweeping the store.

Owns: the list of checkpoints files kept outside the projects folder (`external-checkpoints.txt`
in the store), `referenced_objects` and `sweep_objects`. Objects are shared by every session, so
a sweep reads every session's checkpoints; one it cannot read stops the sweep (any object may be
needed) rather than deleting on a guess.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..config.paths import objects_dir, projects_dir
from ..errors import CheckpointError, CommandcodeError
from ..storage.durable import atomic_write
from ..storage.regular import read_if_exists
from . import store as backups
from .compatible import sweep_raw_objects
from .records import read_checkpoints

SWEEP_GRACE_SECONDS = 3600.0

EXTERNAL_LOCATIONS_NAME = "external-checkpoints.txt"


def iter_checkpoint_files(root: Path | None = None, store_root: Path | None = None) -> Iterator[Path]:
    """Every `*.checkpoints.jsonl` under the projects folder, plus the checkpoints files kept
    elsewhere (a session resumed in place outside the projects folder) that the store lists."""
    base = root if root is not None else projects_dir()
    if base.is_dir():
        for project in sorted(base.iterdir()):
            if project.is_dir() and not project.is_symlink():
                yield from sorted(project.glob("*.checkpoints.jsonl"))
    for line in _external_locations(store_root):
        path = Path(line)
        if path.is_file():
            yield path


def _external_locations(store_root: Path | None) -> list[str]:
    listing = (store_root if store_root is not None else objects_dir()) / EXTERNAL_LOCATIONS_NAME
    data = read_if_exists(listing, follow=True)
    if data is None:
        return []
    return [line for line in data.decode("utf-8", errors="surrogateescape").split("\n") if line]


def register_external_location(path: Path, store_root: Path) -> None:
    """Lists a checkpoints file that lives outside the projects folder, so sweeps keep its
    objects (a sweep only sees what it can find)."""
    location = os.path.abspath(path)
    if os.path.commonpath([location, os.path.abspath(projects_dir())]) == os.path.abspath(projects_dir()):
        return
    known = _external_locations(store_root)
    if location not in known:
        atomic_write(store_root / EXTERNAL_LOCATIONS_NAME, "\n".join([*known, location]).encode("utf-8"))


def referenced_objects(root: Path | None = None, store_root: Path | None = None) -> set[str]:
    """The blake3 objects referenced by any checkpoint of any session."""
    referenced: set[str] = set()
    for path in iter_checkpoint_files(root, store_root):
        for record in read_checkpoints(path):
            referenced.update(item.store_object for item in record.files if item.store_object is not None)
    return referenced


def sweep_objects(store: backups.BackupStore, *, grace_seconds: float = SWEEP_GRACE_SECONDS) -> dict[str, int]:
    """Deletes objects that nothing references (checkpoints, restore journals, archives) and that
    are older than the grace period: the store's garbage collection (`gc.collect`)."""
    from .gc import collect

    try:
        report = collect(grace_seconds=grace_seconds, root=store.root)
    except CheckpointError:
        raise
    except CommandcodeError:  # another collection is running (it does this one's work), or none can lock
        return {"deleted_objects": 0}
    except OSError:  # housekeeping: a turn never fails for it; the next collection tries again
        return {"deleted_objects": 0}
    try:
        sweep_raw_objects(grace_seconds)  # the real CLI's raw blobs no session links to any more
    except OSError:
        pass
    return {"deleted_objects": report.deleted, "deleted_bytes": report.deleted_bytes, "kept_objects": report.kept}
