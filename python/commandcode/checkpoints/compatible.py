"""`checkpoints.compatibleBackups` (default on): each backup is also the real CLI's raw blob.

The real Command Code CLI restores a file only from `file-history/<sid>/<sha256 hex>` (the raw
bytes) and ignores our `algo` key, so a checkpoint that names only a blake3 object of our store
cannot be restored by it. With the setting on, a backup's item is written with `hash` = the
sha256 of the bytes (no `algo`: the real CLI's own shape) and our store's blake3 id in the extra
key `blake3`; the raw blob is a hard link into the session's `file-history/<sid>/` folder to one
shared copy per content in `raw-objects/<sha[:2]>/<sha>`, so N sessions backing up the same
bytes cost one raw copy (the real CLI copies per session). A link that cannot be made (another
file system) falls back to a copy. With the setting off, only our compressed store is written.

The sweep (`references.py`) keeps an object named by `blake3` and removes a shared raw copy once no
session folder links it any more (its link count is 1) and the grace period has passed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import time
from pathlib import Path

from ..config.paths import data_dir, file_history_dir
from ..storage.durable import atomic_write, ensure_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config.context import ProjectContext

BLAKE3_KEY = "blake3"


def raw_objects_dir() -> Path:
    return data_dir() / "raw-objects"


def enabled(project: ProjectContext) -> bool:
    """The setting in the caller's context; settings that cannot be read count as the default (on)."""
    from ..errors import CommandcodeError

    try:
        return project.settings().checkpoints_compatible_backups
    except (CommandcodeError, OSError):
        return True


def write_raw_blob(session_id: str, data: bytes) -> str:
    """Makes `file-history/<session_id>/<sha256>` hold `data` (a link to the shared copy);
    returns the sha256 hex.

    Raises:
        OSError: the blob could not be written.
    """
    digest = hashlib.sha256(data).hexdigest()
    shared = raw_objects_dir() / digest[:2] / digest
    if not _holds(shared, digest):
        ensure_dir(shared.parent)
        atomic_write(shared, data)
    target = file_history_dir(session_id) / digest
    if _holds(target, digest):
        return digest
    ensure_dir(target.parent)
    temporary = target.with_name(f".{digest}.{os.getpid()}.link")
    try:
        os.link(shared, temporary)
    except OSError as error:
        if error.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copyfile(shared, temporary)
    os.replace(temporary, target)
    return digest


class BlobNames:
    """Which raw blobs a folder holds, asked of many digests: each is looked up with `stat` until
    `LISTED_AFTER` lookups, then the folder is listed once (a 1,000-file rewind asks of every
    item: one listing, not 1,000 `stat`s and paths). `has` is `os.path.isfile` of the blob."""

    LISTED_AFTER = 32

    def __init__(self, folder: Path) -> None:
        self.folder = os.fspath(folder)
        self._asked = 0
        self._names: set[str] | None = None

    def has(self, digest: str) -> bool:
        if self._names is None:
            self._asked += 1
            if self._asked <= self.LISTED_AFTER:
                return os.path.isfile(os.path.join(self.folder, digest))
            self._names = self._list()
        return digest in self._names

    def add(self, digest: str) -> None:
        """Notes a blob just written to the folder (a listing made before does not hold it)."""
        if self._names is not None:
            self._names.add(digest)

    def _list(self) -> set[str]:
        try:
            with os.scandir(self.folder) as entries:
                return {entry.name for entry in entries if entry.is_file()}
        except OSError:
            return set()


def _holds(path: Path, digest: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == digest
    except OSError:
        return False


def sweep_raw_objects(grace_seconds: float) -> int:
    """Removes shared raw copies no session folder links any more; returns how many."""
    root = raw_objects_dir()
    removed = 0
    now = time.time()
    try:
        folders = sorted(root.iterdir())
    except OSError:
        return 0
    for folder in folders:
        try:
            names = sorted(folder.iterdir())
        except OSError:
            continue
        for path in names:
            try:
                status = path.lstat()
            except OSError:
                continue
            if status.st_nlink == 1 and now - status.st_mtime > grace_seconds:
                try:
                    path.unlink()
                    removed += 1
                except OSError:
                    continue
    return removed
