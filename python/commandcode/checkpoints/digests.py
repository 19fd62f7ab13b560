"""The object ids a sidecar names, read with bounded memory whatever its size.

`file_digests(path)`: every 64-hex digest in a file, read in chunks of `CHUNK` bytes (with the
63 bytes before each chunk kept, so a digest across a boundary is found), skipping the holes of
a sparse file (`SEEK_DATA`/`SEEK_HOLE`: a hole holds only zero bytes, never a digest). A 1 GB
sparse sidecar costs a few system calls, a 1 GB dense one one chunk of memory.

`checkpoint_references(path)`: the objects a checkpoints file references: parsed
(`FileBackup.store_object`) when it is at most `PARSE_LIMIT` bytes, else every digest in it (a
superset: ids of objects the store does not hold cost nothing to whoever sizes them).
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from ..storage.regular import open_regular

CHUNK = 8 << 20
PARSE_LIMIT = 64 << 20
_DIGEST = re.compile(rb"[0-9a-f]{64}")
_OVERLAP = 63


def _data_extents(descriptor: int, size: int) -> list[tuple[int, int]]:
    """`(start, end)` of each stretch of data; the whole file where holes cannot be asked for."""
    extents: list[tuple[int, int]] = []
    offset = 0
    while offset < size:
        try:
            start = os.lseek(descriptor, offset, os.SEEK_DATA)
        except OSError as error:
            if error.errno == errno.ENXIO:  # only a hole is left
                break
            return [(0, size)]  # the file system cannot tell holes: read it all
        end = os.lseek(descriptor, start, os.SEEK_HOLE)
        extents.append((start, end))
        offset = end
    return extents


def file_digests(path: str | os.PathLike[str]) -> set[str]:
    """Every 64-hex digest in the regular file at `path` (see the module docstring).

    Raises:
        FileNotFoundError, NotRegularFileError, OSError: as `storage.regular.open_regular`.
    """
    found: set[str] = set()
    descriptor = open_regular(path)
    try:
        size = os.fstat(descriptor).st_size
        for start, end in _data_extents(descriptor, size):
            tail, position = b"", start
            while position < end:
                chunk = os.pread(descriptor, min(CHUNK, end - position), position)
                if not chunk:
                    break
                data = tail + chunk
                found.update(match.decode() for match in _DIGEST.findall(data))
                tail, position = data[-_OVERLAP:], position + len(chunk)
    finally:
        os.close(descriptor)
    return found


def checkpoint_references(path: Path) -> set[str]:
    """The objects the checkpoints file at `path` references (see the module docstring).

    Raises:
        CheckpointError: it cannot be read (a FIFO or folder in its place, a bad record).
    """
    from ..errors import CheckpointError
    from .records import read_checkpoints

    try:
        size = os.lstat(path).st_size
    except FileNotFoundError:
        return set()
    except OSError as error:
        raise CheckpointError(f"{path} cannot be read: {error.strerror or error}") from None
    if size <= PARSE_LIMIT:
        return {item.store_object for record in read_checkpoints(path) for item in record.files
                if item.store_object is not None}
    try:
        return file_digests(path)
    except OSError as error:
        raise CheckpointError(f"{path} cannot be read: {error.strerror or error}") from None
