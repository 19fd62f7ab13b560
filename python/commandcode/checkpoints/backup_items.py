"""The item an edit tool's backup adds to the open checkpoint (format §6), taken from the file.

Owns `take_item`, the manager's read of a file before a tool changes it (`manager.py`): a regular
file's bytes go into the store (blake3 object, mode); a missing one is an item with no hash (a
rewind deletes it) and the folders its creation will make (`missingDirs`); a symlink is never
followed (`skipped: "symlink"`) and a file over 10 MB is `skipped: "too_large"`, each with a
notice; under twice a file's size of free space checkpointing pauses (`skipped: "disk_full"`).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..errors import CheckpointError
from . import store as backups
from .disk_pause import DiskPause
from .records import SKIPPED_DISK_FULL, SKIPPED_SYMLINK, SKIPPED_TOO_LARGE, FileBackup
from .redo_points import missing_folders

FreeSpace = Callable[[Path], "int | None"]


def _left_alone(path: str, skipped: str, why: str, notices: list[str]) -> FileBackup:
    """The item of a file no backup is taken of (`skipped`), and the notice saying so."""
    notices.append(f"{path} {why}, and a rewind leaves it as it is")
    return FileBackup(path=path, hash=None, skipped=skipped)


def absent_item(path: str, target: Path, cwd: Path) -> FileBackup:
    """The item of a file that does not exist yet: a rewind deletes it, and the folders its
    creation makes (`missingDirs`) once they are empty."""
    item = FileBackup(path=path, hash=None, algorithm=backups.BLAKE3)
    made = missing_folders(target, cwd)
    if made:
        item.extra["missingDirs"] = made
    return item


def take_item(path: str, key: str, cwd: Path, store: backups.BackupStore, disk: DiskPause, free_space: FreeSpace,
              notices: list[str]) -> FileBackup | None:
    """The item of `path` (resolved: `key`) as it is now, its bytes stored; None for what is not
    a regular file (a folder, FIFO...: a notice says it was not backed up).

    Raises:
        CheckpointError: the file could not be read or stored.
    """
    target = Path(key)
    try:
        status = os.lstat(target)
    except FileNotFoundError:
        return absent_item(path, target, cwd)
    except OSError as error:
        raise CheckpointError(f"cannot back up {path}: {error.strerror}") from None
    if stat.S_ISLNK(status.st_mode):
        return _left_alone(path, SKIPPED_SYMLINK, "is a symlink; it was not followed or backed up", notices)
    if not stat.S_ISREG(status.st_mode):
        notices.append(f"{path} is not a regular file; it was not backed up")
        return None
    if status.st_size > backups.MAX_BACKUP_SIZE:
        return _left_alone(path, SKIPPED_TOO_LARGE, "is over 10 MB; it was not backed up", notices)
    if not disk.space_for(free_space(store.root), status.st_size, path, notices):
        return FileBackup(path=path, hash=None, skipped=SKIPPED_DISK_FULL)
    try:
        snapshot = store.backup_file(target)
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            disk.pause(path, notices, None)
            return FileBackup(path=path, hash=None, skipped=SKIPPED_DISK_FULL)
        raise CheckpointError(f"cannot back up {path}: {error.strerror or error}") from None
    if snapshot.kind == "regular":
        return FileBackup(path=path, hash=snapshot.content_id, algorithm=backups.BLAKE3, mode=snapshot.mode)
    if snapshot.kind == "missing":
        return absent_item(path, target, cwd)
    if snapshot.kind == "symlink":
        return _left_alone(path, SKIPPED_SYMLINK, "is a symlink; it was not followed or backed up", notices)
    if snapshot.kind == "too_large":
        return _left_alone(path, SKIPPED_TOO_LARGE, "is over 10 MB; it was not backed up", notices)
    notices.append(f"{path} is not a regular file; it was not backed up")
    return None
