"""One lock per file path within the process: writers of the same file take turns.

A session's agent and its sub-agents run tools on several threads at once. Two of them editing
one file must not interleave (an edit reads, changes and replaces the file: interleaved, one
edit is lost), and the checkpoint backup of a file must be taken in the same turn as the write
it protects (`checkpoints.manager.CheckpointManager.editing`). `path_lock(key)` is that turn: a
re-entrant lock keyed by the absolute, normalised path (`checkpoints.records.resolve_path`), so
the thread that backs up a file may then write it under the same lock. Locks live only while a
thread holds or waits for them; different paths never wait for each other.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_guard = threading.Lock()
_locks: dict[str, tuple[threading.RLock, int]] = {}  # path -> (its lock, threads holding or waiting)


@contextlib.contextmanager
def path_lock(key: str) -> Iterator[None]:
    """Holds the process-wide lock of the file `key` (an absolute, normalised path) for the block."""
    with _guard:
        lock, users = _locks.get(key) or (threading.RLock(), 0)
        _locks[key] = (lock, users + 1)
    try:
        with lock:
            yield
    finally:
        with _guard:
            lock, users = _locks[key]
            if users == 1:
                del _locks[key]
            else:
                _locks[key] = (lock, users - 1)


def held_paths() -> int:
    """How many paths have a lock now (held or waited for): 0 once every writer is done."""
    with _guard:
        return len(_locks)
