"""A `CheckpointManager`'s records in memory and whether some are not on disk yet (`Ledger`).

Kept apart from the manager so they can still be written when the manager is collected or the
process exits; that late write is skipped if the file changed since this ledger last read or
wrote it (a rewind ran meanwhile), so it can never clobber newer records.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import CheckpointError
from .records import Checkpoint, write_checkpoints


class Ledger:
    """The records of one checkpoints file and whether they are ahead of it (see the module docs)."""

    def __init__(self, path: Path, records: list[Checkpoint]) -> None:
        self.path = path
        self.records = records
        self.dirty = False
        self.stamp = stamp(path)

    def write(self) -> None:
        write_checkpoints(self.path, self.records)
        self.dirty = False
        self.stamp = stamp(self.path)

    def flush_quietly(self) -> None:
        if not self.dirty or stamp(self.path) != self.stamp:
            return
        try:
            self.write()
        except (OSError, CheckpointError):  # CheckpointError: a failed restore's journal is open
            pass  # at exit there is no one to tell; only advisory after-digests are lost


def stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells a rewrite of `path` apart: (inode, size, mtime_ns); None when it is missing."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns)


def format_bytes(count: int) -> str:
    """`count` bytes for a notice: `512 B`, `1.5 MiB`."""
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} B"
