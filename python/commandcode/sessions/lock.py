"""One writer per transcript: an advisory lock held while a session is open for writing.

The lock is a POSIX record lock on `<data dir>/locks/<digest of the transcript path>.lock`
(never on the transcript itself, so reading a transcript can never drop it). A second writer,
in another process or this one, gets `SessionLockedError` naming the holder's pid. Readers never
take the lock. The kernel releases it when the holder exits, however it exits.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import struct
import threading
from pathlib import Path

from ..config.paths import locks_dir
from ..errors import SessionLockedError
from ..storage.durable import FILE_MODE, ensure_dir
from ..storage.regular import open_regular

_FLOCK_FORMAT = "hhqqi"  # struct flock on Linux: l_type, l_whence, l_start, l_len, l_pid
_held_in_this_process: set[str] = set()
_registry_lock = threading.Lock()
_LOCK_ATTEMPTS = 5


def lock_path_for(transcript: Path) -> Path:
    """The lock file that guards `transcript`."""
    key = os.path.realpath(transcript)
    digest = hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return locks_dir() / f"{digest}.lock"


def _holder_pid(descriptor: int) -> int | None:
    query = struct.pack(_FLOCK_FORMAT, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    try:
        answer = fcntl.fcntl(descriptor, fcntl.F_GETLK, query)
    except OSError:
        return None
    lock_type, _, _, _, pid = struct.unpack(_FLOCK_FORMAT, answer)
    return pid if lock_type != fcntl.F_UNLCK and pid > 0 else None


def _take(descriptor: int) -> tuple[bool, int | None]:
    """Tries to lock without waiting: `(True, None)` when taken, else `(False, holder pid)`.

    A holder that lets go between the refused attempt and the question who holds it is not a
    holder: the attempt is repeated, so a refusal names the pid whenever there was one.
    """
    pid = None
    for _ in range(_LOCK_ATTEMPTS):
        try:
            fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True, None
        except OSError as error:
            if error.errno not in (errno.EACCES, errno.EAGAIN):
                raise
        pid = _holder_pid(descriptor)
        if pid is not None:
            break
    return False, pid


def is_locked(transcript: Path) -> bool:
    """Whether some process holds the writer lock of `transcript` (asked with `F_GETLK`, so the
    lock file is neither created nor written)."""
    try:
        descriptor = open_regular(lock_path_for(transcript), os.O_RDWR)
    except OSError:
        return False  # no lock file: nobody ever held it
    try:
        return _holder_pid(descriptor) is not None
    finally:
        os.close(descriptor)


class WriterLock:
    """The exclusive writer lock of one transcript; release it with `release()` or `with`."""

    def __init__(self, transcript: Path) -> None:
        self.transcript = transcript
        self.path = lock_path_for(transcript)
        self._key = str(self.path)
        self._descriptor: int | None = None

    def acquire(self) -> WriterLock:
        """Takes the lock without waiting.

        Raises:
            SessionLockedError: another writer holds it.
        """
        with _registry_lock:
            if self._key in _held_in_this_process:
                raise SessionLockedError(
                    f"session {self.transcript.name} is already open for writing in this process (pid {os.getpid()})",
                    holder_pid=os.getpid(),
                )
            ensure_dir(self.path.parent)
            descriptor = open_regular(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
            try:
                taken, pid = _take(descriptor)
            except OSError:
                os.close(descriptor)
                raise
            if not taken:
                os.close(descriptor)
                holder = f"process {pid}" if pid else "another process"
                raise SessionLockedError(
                    f"session {self.transcript.name} is open for writing by {holder}",
                    holder_pid=pid,
                    hint="close the other commandcode session first, or fork this one",
                ) from None
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, f"{os.getpid()}\n{self.transcript}\n".encode("utf-8", "surrogateescape"), 0)
            self._descriptor = descriptor
            _held_in_this_process.add(self._key)
        return self

    def release(self) -> None:
        """Drops the lock (idempotent)."""
        with _registry_lock:
            if self._descriptor is None:
                return
            os.close(self._descriptor)  # closing drops the POSIX lock
            self._descriptor = None
            _held_in_this_process.discard(self._key)

    def __enter__(self) -> WriterLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def held_here(transcript: Path) -> bool:
    """Whether this process holds `transcript`'s writer lock."""
    with _registry_lock:
        return str(lock_path_for(transcript)) in _held_in_this_process


def lock_holder(transcript: Path) -> int | None:
    """The pid of the process that holds `transcript`'s writer lock, or None when nobody does
    (this process counts when it holds it itself). Nothing is taken or created."""
    path = lock_path_for(transcript)
    with _registry_lock:
        if str(path) in _held_in_this_process:
            return os.getpid()
    try:
        descriptor = open_regular(path, os.O_RDWR)
    except OSError:
        return None
    try:
        return _holder_pid(descriptor)
    finally:
        os.close(descriptor)
