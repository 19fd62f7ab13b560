"""`gc.lock` is held shared for as long as any put is in flight, on any thread: the shell
tracker stores a baseline on several threads, and a flock belongs to the open file, so one
thread's release must not drop the hold another thread's put still counts on (a collection
could then unlink an object between judging it old and that put)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from commandcode.checkpoints.store import GC_LOCK_NAME, BackupStore


def _collection_could_lock(root: Path) -> bool:
    descriptor = os.open(root / GC_LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(descriptor)
    return True


def test_the_shared_hold_lasts_until_the_last_put_ends(tmp_path: Path) -> None:
    root = tmp_path / "objects"
    store = BackupStore(root)
    first, second = store._putting(), store._putting()
    first.__enter__()
    assert not _collection_could_lock(root)
    second.__enter__()  # a put on another thread, while the first is in flight
    first.__exit__(None, None, None)
    assert not _collection_could_lock(root), "the first put's release dropped the second's hold"
    second.__exit__(None, None, None)
    assert _collection_could_lock(root)
    (tmp_path / "file.txt").write_text("stored")
    assert store.backup_file(tmp_path / "file.txt").stored_now
    assert _collection_could_lock(root)
