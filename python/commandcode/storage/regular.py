"""Reading a small file of ours that must be a regular file, without ever blocking.

A FIFO, device or folder put where a meta or checkpoints file belongs must neither block the
reader nor feed it endless bytes: the file is opened with `O_NONBLOCK`, checked with `fstat`,
and only then read. A symlink is read through (our writes replace the link, never its target).
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

_CHUNK = 1 << 20


class NotRegularFileError(OSError):
    """Something other than a regular file (a folder, FIFO or device) is at the path."""


def read_regular(path: Path | str) -> bytes | None:
    """The bytes of the regular file at `path`, or `None` when there is none.

    Raises:
        NotRegularFileError: it is a folder, FIFO or device (`EINVAL`).
        OSError: it cannot be opened or read.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise NotRegularFileError(errno.EINVAL, "not a regular file", os.fspath(path))
        chunks = []
        while chunk := os.read(descriptor, _CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)
