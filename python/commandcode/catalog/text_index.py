"""The catalog's full-text index: which transcript texts hold which trigrams, built off the
critical path (by `sessions search` or by the background indexer, never by a listing or a resume).

Layout (docs/format.md §20, "text index"), in the catalog file, owned here and versioned by
`text_index_meta.version` (another version: these tables are dropped and rebuilt):

- `text_files(id, path, inode, size, mtime_ns, indexed, tail_hash, results)`: how far each
  transcript's user, assistant and tool-call texts are indexed (`indexed`: the offset after the
  last whole line read), the hash of the 4 KiB before that point, to tell an append from a
  rewrite, and how far its tool results are (`results`, never past `indexed`): results cost the
  most to index and only `--deep` needs them, so they are a second pass (`build(results=True)`),
  which the background indexer runs after the first;
- `text_rows(id, file, offset, ordinal, kind, ts, length)`: one row per text, addressed by its
  line's byte offset and its ordinal among that line's texts (`_native.texts_at` reads it back),
  with its length in characters (the search ranks by it, see `search.py`);
- `text_fts`: user, assistant and tool-call texts; `result_fts`: tool results (`--deep`). Both
  FTS5, trigram, contentless, `detail=none`: they say which rows hold all of a query's
  trigrams, nothing more (no positions: a fifth of the size of `detail=full` and a faster build).
  The FTS rowid is the `text_rows` id. Neither keeps a copy of the text: every candidate is read
  back from the transcript and kept only when its text holds the query (no wrong snippet, no
  trigrams matched out of order).

A transcript rewritten, truncated, replaced (another inode, a shorter file, another tail hash)
or gone loses its rows; contentless FTS5 rows cannot be deleted on this SQLite, so their postings stay
as garbage that matches no row, counted in `text_index_meta.garbage`, and the index is rebuilt
once garbage outweighs the live rows. Text is read by the Rust core (`_native.extract_texts`,
appended bytes only) and committed every `STEP_BYTES`, together with the new offsets, so a build
killed at any point resumes where its last commit stopped. One builder at a time holds
`<catalog>.text-lock` (`flock`); a search that finds it held searches the unindexed rest by a
native scan instead of waiting.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable

from .db import from_db, to_db

VERSION = 2
STEP_BYTES = 64 << 20
TAIL_HASH_BYTES = 4096
REBUILD_GARBAGE = 10_000
KIND_NAMES = ("user", "assistant", "tool", "result")
RESULT = 3
TEXT_KINDS, RESULT_KINDS = 0b0111, 0b1000  # `_native` kind masks of the two passes

_TABLES = (
    "CREATE TABLE IF NOT EXISTS text_index_meta (key TEXT PRIMARY KEY, value INTEGER)",
    "CREATE TABLE IF NOT EXISTS text_files (id INTEGER PRIMARY KEY, path TEXT UNIQUE, inode INTEGER, size INTEGER, "
    "mtime_ns INTEGER, indexed INTEGER, tail_hash TEXT, results INTEGER)",
    "CREATE TABLE IF NOT EXISTS text_rows (id INTEGER PRIMARY KEY, file INTEGER, offset INTEGER, ordinal INTEGER, "
    "kind INTEGER, ts TEXT, length INTEGER)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS text_fts USING fts5(text, content='', tokenize='trigram', detail=none, "
    "columnsize=0)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS result_fts USING fts5(text, content='', tokenize='trigram', detail=none, "
    "columnsize=0)",
)
_DROP = ("text_fts", "result_fts", "text_rows", "text_files", "text_index_meta")

Progress = Callable[[int, int], None]


class FileState:
    """One transcript of a search's scope: where its index stops and where it ends now."""

    __slots__ = ("file_id", "indexed", "inode", "mtime_ns", "path", "results", "size")

    def __init__(self, path: str, file_id: int | None, indexed: int, size: int, inode: int, mtime_ns: int,
                 results: int = 0) -> None:
        self.path, self.file_id, self.indexed, self.results = path, file_id, indexed, results
        self.size, self.inode, self.mtime_ns = size, inode, mtime_ns

    @property
    def pending(self) -> int:
        """Bytes whose user, assistant and tool-call texts are not indexed."""
        return max(0, self.size - self.indexed)

    @property
    def pending_results(self) -> int:
        """Bytes whose tool results are not indexed."""
        return max(0, self.size - self.results)


def prepare(connection: sqlite3.Connection) -> None:
    """Creates the text index's tables, or drops and recreates them when another version made them.

    Raises:
        sqlite3.Error: the catalog cannot be written (the caller searches by native scan).
    """
    try:
        row = connection.execute("SELECT value FROM text_index_meta WHERE key = 'version'").fetchone()
    except sqlite3.OperationalError:
        row = None
    if row is not None and row[0] == VERSION:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        for table in _DROP:
            connection.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _TABLES:
            connection.execute(statement)
        connection.execute("INSERT INTO text_index_meta VALUES ('version', ?), ('garbage', 0), ('next_row', 1), "
                           "('texts', 0), ('chars', 0)", (VERSION,))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def tail_hash(path: str, end: int) -> str:
    """The hash of the `TAIL_HASH_BYTES` before `end` (empty for `end` 0).

    Raises:
        OSError: the transcript cannot be read.
    """
    if end <= 0:
        return ""
    import hashlib

    start = max(0, end - TAIL_HASH_BYTES)
    with open(path, "rb") as handle:
        handle.seek(start)
        return hashlib.blake2b(handle.read(end - start), digest_size=16).hexdigest()


def states(connection: sqlite3.Connection, paths: Iterable[str]) -> list[FileState]:
    """The index state of each transcript in `paths`; a transcript changed other than by appending
    (another inode, shorter than indexed, another tail hash) has its rows dropped first and
    starts from 0. A file that cannot be read is left out."""
    known = {str(from_db(path)): (file_id, inode, size, mtime_ns, indexed, tail, results)
             for file_id, path, inode, size, mtime_ns, indexed, tail, results in connection.execute(
                 "SELECT id, path, inode, size, mtime_ns, indexed, tail_hash, results FROM text_files")}
    found: list[FileState] = []
    stale: list[int] = []
    for path in paths:
        try:
            status = os.stat(path)
        except OSError:
            continue
        old = known.get(path)
        if old is None:
            found.append(FileState(path, None, 0, status.st_size, status.st_ino, status.st_mtime_ns))
            continue
        file_id, inode, size, mtime_ns, indexed, tail, results = old
        same = (inode, size, mtime_ns) == (status.st_ino, status.st_size, status.st_mtime_ns)
        if not same:
            try:
                same = inode == status.st_ino and indexed <= status.st_size and tail_hash(path, indexed) == tail
            except OSError:
                same = False
        if not same:
            stale.append(file_id)
            indexed = results = 0
        found.append(FileState(path, file_id, indexed, status.st_size, status.st_ino, status.st_mtime_ns, results))
    # A transcript gone from a folder searched now is forgotten (its postings become garbage).
    wanted = {state.path for state in found}
    folders = {os.path.dirname(path) for path in wanted}
    gone = [old[0] for path, old in known.items()
            if path not in wanted and os.path.dirname(path) in folders and not os.path.exists(path)]
    if stale or gone:
        _drop_rows(connection, stale, gone)
    return found


def _drop_rows(connection: sqlite3.Connection, file_ids: list[int], gone: list[int]) -> None:
    """Forgets the rows of these files (their FTS postings become garbage): `file_ids` start
    again from 0, `gone` are forgotten."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        dropped = 0
        for file_id in (*file_ids, *gone):
            dropped += connection.execute("DELETE FROM text_rows WHERE file = ?", (file_id,)).rowcount
        for file_id in file_ids:
            connection.execute("UPDATE text_files SET indexed = 0, tail_hash = '', results = 0 WHERE id = ?", (file_id,))
        for file_id in gone:
            connection.execute("DELETE FROM text_files WHERE id = ?", (file_id,))
        connection.execute("UPDATE text_index_meta SET value = value + ? WHERE key = 'garbage'", (dropped,))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def needs_rebuild(connection: sqlite3.Connection) -> bool:
    """Whether garbage postings outweigh the live rows (then `reset` and build again)."""
    garbage = connection.execute("SELECT value FROM text_index_meta WHERE key = 'garbage'").fetchone()[0]
    if garbage < REBUILD_GARBAGE:
        return False
    live = connection.execute("SELECT count(*) FROM text_rows").fetchone()[0]
    return bool(garbage > live)


def reset(connection: sqlite3.Connection) -> None:
    """Drops the whole text index (it is rebuilt from the transcripts)."""
    connection.execute("UPDATE text_index_meta SET value = -1 WHERE key = 'version'")
    prepare(connection)


def build(connection: sqlite3.Connection, files: list[FileState], *, results: bool = False,
          progress: Progress | None = None, should_stop: Callable[[], bool] | None = None) -> int:
    """Indexes the pending bytes of `files` (their user, assistant and tool-call texts; with
    `results`, their tool results up to where the texts are indexed), committing every
    `STEP_BYTES`; returns the bytes read. Stops early (between commits) when `should_stop()` says
    so; `progress(done, total)` is told after every commit.

    Raises:
        sqlite3.Error: the catalog failed (what was committed stays; the next build resumes).
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    total = sum(max(0, state.indexed - state.results) if results else state.pending for state in files)
    done = 0
    # The next step is read (natively, the GIL released) while this one is committed.
    with ThreadPoolExecutor(max_workers=1) as reader:
        for state in files:
            ahead: Future[Step] | None = None
            while (state.indexed > state.results) if results else state.pending > 0:
                if should_stop is not None and should_stop():
                    return done
                start = state.results if results else state.indexed
                try:
                    rows, end, tail = ahead.result() if ahead is not None else _step(state, start, results=results)
                except OSError:
                    break  # unreadable now: searched by scan (which says so) until it reads again
                ahead = None
                if end == start or (results and end > state.indexed):
                    if not results:
                        state.size = end  # only a torn last line is left: it waits for its writer
                    break
                if end < (state.indexed if results else state.size):
                    ahead = reader.submit(_step, state, end, results=results)
                _commit(connection, state, rows, end, tail, results=results)
                done += end - start
                if progress is not None:
                    progress(done, total)
    return done


Step = tuple[list[tuple[int, int, int, str, str, str]], int, str]  # rows, end, tail hash


def _step(state: FileState, start: int, *, results: bool) -> Step:
    """The rows of one step of `state` from `start` (tool results, or the other texts), the
    offset after its last whole line and (for the texts) the tail hash before that offset.

    Raises:
        OSError: the transcript cannot be read.
    """
    from .._native import extract_texts

    if results:
        rows, end = extract_texts(state.path, start, min(STEP_BYTES, state.indexed - start), RESULT_KINDS)
        return rows, end, ""
    rows, end = extract_texts(state.path, start, STEP_BYTES, TEXT_KINDS)
    return rows, end, tail_hash(state.path, end)


def _commit(connection: sqlite3.Connection, state: FileState, rows: list[tuple[int, int, int, str, str, str]],
            end: int, tail: str, *, results: bool) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        if state.file_id is None:
            state.file_id = connection.execute(
                "INSERT OR REPLACE INTO text_files (path, inode, size, mtime_ns, indexed, tail_hash, results) "
                "VALUES (?, ?, ?, ?, 0, '', 0)", (to_db(state.path), state.inode, state.size, state.mtime_ns)).lastrowid
        # Row ids are never reused: a dropped row's postings stay in the FTS tables as garbage.
        first = connection.execute("SELECT value FROM text_index_meta WHERE key = 'next_row'").fetchone()[0]
        connection.execute("UPDATE text_index_meta SET value = ? WHERE key = 'next_row'", (first + len(rows),))
        file_id = state.file_id
        lengths = [len(row[5]) for row in rows]
        connection.executemany("INSERT INTO text_rows VALUES (?, ?, ?, ?, ?, ?, ?)",
                               [(first + number, file_id, offset, ordinal, kind, stamp, length)
                                for number, ((offset, ordinal, kind, _entry, stamp, _text), length)
                                in enumerate(zip(rows, lengths))])
        if not results:  # the ranking's average text length (`search.py`)
            connection.execute("UPDATE text_index_meta SET value = value + CASE key WHEN 'texts' THEN ? ELSE ? END "
                               "WHERE key IN ('texts', 'chars')", (len(rows), sum(lengths)))
        table = "result_fts" if results else "text_fts"
        connection.executemany(f"INSERT INTO {table} (rowid, text) VALUES (?, ?)",
                               [(first + number, row[5]) for number, row in enumerate(rows)])
        if results:
            connection.execute("UPDATE text_files SET results = ? WHERE id = ?", (end, file_id))
        else:
            connection.execute("UPDATE text_files SET inode = ?, size = ?, mtime_ns = ?, indexed = ?, tail_hash = ? "
                               "WHERE id = ?", (state.inode, state.size, state.mtime_ns, end, tail, file_id))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    if results:
        state.results = end
    else:
        state.indexed = end


Row = tuple[int, int, int, str, str, str]  # offset, ordinal, kind, entry id, timestamp, text


def fold(text: str) -> str:
    """`text` lowercased as matching compares it (Unicode: É matches é)."""
    from .._native import fold_text

    return fold_text(text)


def scan(path: str, start: int, stop: int, folded: str, kinds: int, keep: int) -> list[Row]:
    """The rows between `start` and `stop` of the kinds in the mask `kinds` whose folded text holds
    `folded`, the last `keep` of them: the native scan of bytes the index does not cover.

    Raises:
        OSError: the transcript cannot be read.
    """
    from .._native import search_texts

    return search_texts(path, start, stop, folded, kinds, keep)[0]


def read_back(path: str, offsets: list[int]) -> list[list[Row]]:
    """The rows of the lines starting at `offsets` (none for a line that is gone or changed).

    Raises:
        OSError: the transcript cannot be read.
    """
    from .._native import texts_at

    return texts_at(path, offsets)


def lock(catalog_path: str, *, wait: bool) -> int | None:
    """Takes the builder's lock (`<catalog>.text-lock`); its descriptor, or None when another
    process holds it (and not `wait`) or it cannot be made. Closing the descriptor releases it."""
    import fcntl

    try:
        descriptor = os.open(catalog_path + ".text-lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        os.close(descriptor)
        return None
    return descriptor


def start_background(paths: list[str]) -> bool:
    """Starts the background indexer for these transcripts (a detached `python -m
    commandcode.catalog.text_index`); whether it started."""
    import subprocess
    import sys

    try:
        subprocess.Popen([sys.executable, "-m", "commandcode.catalog.text_index", *paths], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except OSError:
        return False
    return True


def index_paths(paths: list[str], *, progress: Progress | None = None) -> int:
    """The background indexer's work: takes the lock (waiting for another builder), brings the
    index of `paths` up to date and returns the bytes read; 0 when the catalog cannot be used."""
    from .db import CatalogUnavailable, open_catalog

    try:
        catalog = open_catalog()
    except CatalogUnavailable:
        return 0
    try:
        if not catalog.fts:
            return 0
        descriptor = lock(catalog.path, wait=True)
        if descriptor is None:
            return 0
        try:
            prepare(catalog.connection)
            if needs_rebuild(catalog.connection):
                reset(catalog.connection)
            files = states(catalog.connection, paths)
            read = build(catalog.connection, files, progress=progress)
            return read + build(catalog.connection, files, results=True, progress=progress)
        finally:
            os.close(descriptor)
    except sqlite3.Error:
        return 0
    finally:
        catalog.close()


if __name__ == "__main__":
    import sys

    index_paths(sys.argv[1:])
