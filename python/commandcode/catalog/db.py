"""The catalog database: `<data dir>/catalog.sqlite3`, opened with the stdlib `sqlite3`.

It is only a cache of what the transcripts say (docs/format.md §20): deleting it loses nothing, and
`commandcode doctor --reindex` rebuilds it. Opening checks what this SQLite offers: FTS5 with the
`trigram` tokenizer gives ranked (bm25) search and indexed `LIKE`; without it the text table is a
plain table searched with `LIKE`. A catalog made by another schema version, or with a text table
this SQLite cannot use, is emptied and rebuilt. Anything that keeps it from being used — a
directory in its place, a lock held too long, a damaged or truncated file — raises
`CatalogUnavailable`, and callers fall back to scanning the folders (with a warning), never fail.
"""

from __future__ import annotations

import os
import sqlite3
import stat

from ..config.paths import catalog_file

SCHEMA_VERSION = 5
BUSY_TIMEOUT_S = 2.0

SESSION_COLUMNS = (
    "path", "folder", "id", "size", "mtime_ns", "inode", "meta_sig", "ctime_ns", "fingerprint", "indexed_bytes",
    "tail_hash", "name", "created", "modified", "sort_key", "message_count", "first_message", "last_prompt",
    "git_branch", "entrypoint", "parent_session_id", "cwd", "skipped_lines", "damaged", "user_renamed", "aliases",
)
TEXT_STATE_COLUMNS = ("indexed_bytes", "tail_hash")
"""Legacy text-pass state columns (schema 4); the search's text index keeps its own (`text_index.py`)."""
ROW_STATE_COLUMNS = tuple(column for column in SESSION_COLUMNS if column not in TEXT_STATE_COLUMNS)

_SESSIONS = f"""CREATE TABLE IF NOT EXISTS sessions (
    {", ".join(column + (" TEXT PRIMARY KEY" if column == "path" else "") for column in SESSION_COLUMNS)})"""
# A warm listing reads no row (the folder snapshot answers, `freshness.py`): schema 4's covering
# index of the file states only made every cold build write its pages (13% of them) for the rare
# full pass.
_INDEXES = ("CREATE INDEX IF NOT EXISTS sessions_folder ON sessions(folder, sort_key)",
            "CREATE INDEX IF NOT EXISTS sessions_id ON sessions(id)")
_TEXTS_FTS = ("CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5("
              "text, path UNINDEXED, entry UNINDEXED, ts UNINDEXED, kind UNINDEXED, tokenize='trigram')")
_TEXTS_PLAIN = "CREATE TABLE IF NOT EXISTS texts (text TEXT, path TEXT, entry TEXT, ts TEXT, kind TEXT)"
# One snapshot of each folder's file states at its last refresh (catalog/freshness.py); added to a
# catalog of this schema when missing, so no rebuild is needed for it.
_SNAPSHOTS = "CREATE TABLE IF NOT EXISTS folder_snapshots (folder TEXT PRIMARY KEY, snapshot BLOB, rows INTEGER)"
_TEXTS_PLAIN_INDEX = "CREATE INDEX IF NOT EXISTS texts_path ON texts(path)"


def to_db(value: object) -> object:
    """A value as the catalog stores it: a string SQLite cannot hold as text (a lone surrogate,
    from an undecodable file name or a hostile transcript) is stored as its `surrogatepass` bytes."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass")
    return value


def from_db(value: object) -> object:
    """The value `to_db` stored."""
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def searchable(text: str) -> str:
    """Text for the full-text table, which holds only valid UTF-8 (lone surrogates become U+FFFD)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


class CatalogUnavailable(Exception):
    """The catalog cannot be used now; `str()` says why, in one line."""


def describe(error: BaseException) -> str:
    """A one-line reason for a failed catalog operation."""
    text = str(error) or type(error).__name__
    if isinstance(error, sqlite3.OperationalError) and "locked" in text:
        return "it is locked by another process"
    if isinstance(error, sqlite3.DatabaseError) and not isinstance(error, sqlite3.OperationalError):
        return f"it is damaged ({text}); `commandcode doctor --reindex` rebuilds it"
    return text


def fts5_trigram_available(connection: sqlite3.Connection) -> bool:
    """Whether this SQLite has FTS5 with the trigram tokenizer (SQLite 3.34 or later, built with FTS5)."""
    try:
        connection.execute("CREATE VIRTUAL TABLE temp.fts_probe USING fts5(x, tokenize='trigram')")
        connection.execute("DROP TABLE temp.fts_probe")
    except sqlite3.Error:
        return False
    return True


class Catalog:
    """An open catalog: the connection and whether its text table is FTS5."""

    def __init__(self, connection: sqlite3.Connection, path: str, *, fts: bool) -> None:
        self.connection = connection
        self.path = path
        self.fts = fts

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_catalog(path: str | None = None, *, use_fts: bool | None = None) -> Catalog:
    """Opens (creating or upgrading) the catalog. `use_fts=False` pretends this SQLite has no
    FTS5 (the tests of the `LIKE` fallback).

    Raises:
        CatalogUnavailable: it cannot be used (a directory in its place, locked, damaged).
    """
    where = path or catalog_file()
    if os.path.isdir(where):
        raise CatalogUnavailable(f"{where} is a directory, not a catalog")
    folder = os.path.dirname(where)
    try:
        if not os.path.isdir(folder):
            from ..storage.durable import ensure_dir

            ensure_dir(folder)
        _private_file(where)
        connection = sqlite3.connect(where, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as error:
        raise CatalogUnavailable(f"{where}: {describe(error)}") from None
    try:
        # A cache: a commit need not reach the disk before the listing goes on (WAL keeps the file
        # consistent; a power cut loses at most the last refreshes, which the next listing redoes).
        connection.execute("PRAGMA synchronous=NORMAL")
        # A cold build of thousands of rows keeps its pages in memory until it commits, instead
        # of spilling them to the WAL mid-transaction (as it did with the default 2 MB).
        connection.execute(f"PRAGMA cache_size={-CACHE_KIB}")
        fts = fts5_trigram_available(connection) if use_fts is not False else False
        _prepare(connection, fts)
    except sqlite3.Error as error:
        connection.close()
        raise CatalogUnavailable(f"{where}: {describe(error)}") from None
    return Catalog(connection, where, fts=fts)


CACHE_KIB = 32 << 10
"""The page cache's bound, in KiB (SQLite allocates it only as pages are used)."""


def _private_file(where: str) -> None:
    """Creates the catalog file 0600 (it holds the sessions' text; SQLite gives its `-wal` and
    `-shm` files the same mode), and tightens one an older version left readable by others.

    Raises:
        CatalogUnavailable: something other than a regular file is in its place.
    """
    descriptor = os.open(where, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):  # a FIFO or device: SQLite would block on it or damage it
            raise CatalogUnavailable(f"{where} is not a regular file (left as it is)")
        if status.st_mode & 0o077 and status.st_uid == os.getuid():
            os.fchmod(descriptor, 0o600)
    finally:
        os.close(descriptor)


def _prepare(connection: sqlite3.Connection, fts: bool) -> None:
    """Creates the tables, or empties and recreates them when they were made by another schema
    version or with the other kind of text table."""
    wanted = SCHEMA_VERSION * 2 + (1 if fts else 0)
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version == wanted:
        connection.execute("SELECT count(*) FROM sessions WHERE 0").fetchone()  # a damaged file fails here
        if connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'folder_snapshots'").fetchone() is None:
            connection.execute(_SNAPSHOTS)
        return
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute("DROP TABLE IF EXISTS texts")
        connection.execute("DROP TABLE IF EXISTS sessions")
        connection.execute("DROP TABLE IF EXISTS folder_snapshots")
        connection.execute(_SESSIONS)
        connection.execute(_SNAPSHOTS)
        for statement in _INDEXES:
            connection.execute(statement)
        connection.execute(_TEXTS_FTS if fts else _TEXTS_PLAIN)
        if not fts:
            connection.execute(_TEXTS_PLAIN_INDEX)
        connection.execute(f"PRAGMA user_version = {wanted}")
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def remove_catalog(path: str | None = None) -> str:
    """Deletes the catalog file and its WAL files (it is a cache); returns its path.

    Raises:
        CatalogUnavailable: a directory is in its place (left as it is: it is not ours to delete).
    """
    where = path or catalog_file()
    if os.path.isdir(where):
        raise CatalogUnavailable(f"{where} is a directory, not a catalog; move it away first")
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(where + suffix)
        except FileNotFoundError:
            pass
    return where
