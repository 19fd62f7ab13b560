"""Copying a byte range from one file to another in the kernel, with the copy's write-back to the
disk started as it goes, so the `fsync` that makes it durable afterwards only waits for the tail.

A copy that is `fsync`ed right after (a fork where the system gives no boot id, a fork repaired
after a crash, a sub-agent run's transcript) would otherwise add the disk's write to the copy's
time: copied and then fsynced, the write starts when the copy ends (a 1 GB copy of 0.3 s, then
0.3 s more for the fsync, on the machines we measure). Started chunk by chunk with
`sync_file_range(SYNC_FILE_RANGE_WRITE)`, the write overlaps the copy and the fsync finds almost
nothing left to do. That call only starts the write (it waits for nothing and promises nothing):
durability still comes from the caller's `fsync`, and where the call is missing (not Linux, no
libc symbol) the copy is the same, only without the overlap. A copy nobody `fsync`s soon (a fork,
made durable by its recovery record: `sessions/unsynced.py`) asks for no write-back.

The copy itself is `copy_file_range` (a reflink where the file system makes one), falling back
to plain reads and writes where the kernel refuses it (across file systems, an old kernel).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

from .durable import write_all

__all__ = ["RangeShrankError", "copy_range"]

_CHUNK = 64 << 20  # a write-back started every 64 MiB: small enough to overlap, few enough calls
_PLAIN_CHUNK = 1 << 20
_REFUSED = (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP)
_SYNC_FILE_RANGE_WRITE = 2

_start_writeback: Callable[[int, int, int], None] | None = None


class RangeShrankError(OSError):
    """The source ended before the range did (it was truncated while it was being copied)."""


def copy_range(source: int, target: int, offset: int, length: int, *, writeback: bool = True) -> None:
    """Appends `length` bytes of `source` from `offset` at `target`'s position, in the kernel,
    starting the write-back of what was copied every 64 MiB (unless `writeback` is False: a copy
    nobody `fsync`s soon leaves the write to the kernel's flusher, as `cp` does).

    Raises:
        RangeShrankError: `source` holds fewer bytes than asked for.
        OSError: a read or write failed (what was appended so far stays; the caller discards it).
    """
    end = offset + length
    written = os.lseek(target, 0, os.SEEK_CUR)
    start_writeback = _writeback() if writeback else _no_writeback
    while offset < end:
        try:
            copied = os.copy_file_range(source, target, min(_CHUNK, end - offset), offset)
        except OSError as error:
            if error.errno not in _REFUSED:
                raise
            _copy_plainly(source, target, offset, end)
            return
        if copied == 0:
            raise RangeShrankError(errno.EIO, "the file shrank while it was being copied")
        start_writeback(target, written, copied)
        offset += copied
        written += copied


def _copy_plainly(source: int, target: int, offset: int, end: int) -> None:
    while offset < end:
        data = os.pread(source, min(_PLAIN_CHUNK, end - offset), offset)
        if not data:
            raise RangeShrankError(errno.EIO, "the file shrank while it was being copied")
        write_all(target, data)
        offset += len(data)


def _writeback() -> Callable[[int, int, int], None]:
    """`sync_file_range(fd, offset, count, SYNC_FILE_RANGE_WRITE)`, looked up once (ctypes costs
    about 2 ms, paid only by a copy); a no-op where the call is missing or refused."""
    global _start_writeback
    if _start_writeback is None:
        _start_writeback = _no_writeback
        try:
            import ctypes

            call = ctypes.CDLL(None, use_errno=True).sync_file_range
        except (OSError, AttributeError):
            return _start_writeback
        call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
        call.restype = ctypes.c_int

        def start(descriptor: int, offset: int, count: int) -> None:
            call(descriptor, offset, count, _SYNC_FILE_RANGE_WRITE)  # a refusal only loses the overlap

        _start_writeback = start
    return _start_writeback


def _no_writeback(descriptor: int, offset: int, count: int) -> None:
    del descriptor, offset, count
