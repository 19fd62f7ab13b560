"""The text table's incremental fill, run only for a search (never for a listing or a resume).

`refresh_texts(catalog, folders)` reads, for each session row of `folders` whose transcript holds
bytes the text table has not seen, the searchable text of those bytes only (`texts.read_texts`
from where the last pass stopped), when the bytes before that point are still the ones indexed
(same inode, and the 4 KiB before the old end hash the same); otherwise the session's text rows
are dropped and its text re-read whole. Where a pass stopped is kept in the row's
`TEXT_STATE_COLUMNS` (`indexed_bytes`, and `tail_hash` as `inode:ctime_ns:hash` of the row when
read), which a row's refresh leaves alone: a row whose ctime moved is looked at again even when its
size did not (a rewrite in place). Moved out of `index.py` so that rows never wait for text; the full-text work
(`text_index.py`) replaces this module.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable

from .db import Catalog, from_db, searchable, to_db
from .texts import TextRow, read_texts

Progress = Callable[[int, int], None]
TAIL_HASH_BYTES = 4096


def _tail_hash(path: str, end: int) -> str:
    start = max(0, end - TAIL_HASH_BYTES)
    with open(path, "rb") as handle:
        handle.seek(start)
        return hashlib.blake2b(handle.read(end - start), digest_size=16).hexdigest()


def refresh_texts(catalog: Catalog, folders: Iterable[str], progress: Progress | None = None) -> int:
    """Brings the text rows of `folders`' sessions up to date; returns the bytes read.

    Raises:
        sqlite3.Error: the catalog failed.
    """
    connection = catalog.connection
    pending: list[tuple[str, int, str, object, object]] = []
    for folder in folders:
        for path, size, inode, ctime, indexed, state in connection.execute(
                "SELECT path, size, inode, ctime_ns, indexed_bytes, tail_hash FROM sessions WHERE folder = ?",
                (to_db(folder),)):
            if indexed != size or not isinstance(state, str) or not state.startswith(f"{inode}:{ctime}:"):
                pending.append((str(from_db(path)), int(size), f"{inode}:{ctime}:", indexed, state))
    total = sum(size for _, size, _, _, _ in pending)
    done = 0
    read = 0
    for path, size, key, indexed, state in pending:
        start = 0
        inode = key.split(":", 1)[0]
        if isinstance(indexed, int) and isinstance(state, str) and state.startswith(f"{inode}:") and indexed <= size:
            try:
                if state.rsplit(":", 1)[-1] == _tail_hash(path, indexed):
                    start = indexed
            except OSError:
                pass
        try:
            texts, offset, _ = read_texts(path, start)
            tail = f"{key}{_tail_hash(path, offset)}"
        except OSError:
            continue  # the listing says why; the text waits for the next search
        _store(connection, path, texts, offset, tail, reset=start == 0)
        read += offset - start
        done += size
        if progress is not None:
            progress(done, total)
    return read


def _store(connection: sqlite3.Connection, path: str, texts: list[TextRow], offset: int, tail: str,
           *, reset: bool) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        key = searchable(path)
        if reset:
            connection.execute("DELETE FROM texts WHERE path = ?", (key,))
        if texts:
            connection.executemany("INSERT INTO texts (text, path, entry, ts, kind) VALUES (?, ?, ?, ?, ?)",
                                   [(searchable(text), key, searchable(entry), searchable(stamp), kind)
                                    for entry, stamp, kind, text in texts])
        connection.execute("UPDATE sessions SET indexed_bytes = ?, tail_hash = ? WHERE path = ?",
                           (offset, tail, to_db(path)))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
