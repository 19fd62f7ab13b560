"""Keeping the catalog in step with the transcripts, and reading listing rows out of it.

`refresh(catalog, folders)` finds, for each project folder, the transcripts whose size, mtime or
inode (or meta sidecar's size and mtime) differ from their rows (`freshness.changed_files`: an
unchanged folder costs one native directory read and no row read). A changed one is re-summarized through `open_session` (whose index sidecar scans only the
appended bytes) and its searchable text is read from where the last pass stopped — only the
appended bytes — when the bytes before that point are still the ones indexed (same inode, and the
4 KiB before the old end hash the same); otherwise its text is re-read whole. Rows of transcripts
that are gone are dropped (the cache forgets; no session file is ever touched). Work is committed
in batches, so another listing waits at most one batch. `progress(done_bytes, total_bytes)` is
called while a large batch of changes is read (the CLI draws a progress bar with it).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable

from ..errors import CommandcodeError
from .db import SESSION_COLUMNS, Catalog, from_db, searchable, to_db
from .freshness import changed_files, record_snapshots
from .summary import SessionSummary, damaged_summary, summarize
from .texts import TextRow, last_prompt_of
from .times import sort_key

Progress = Callable[[int, int], None]
TAIL_HASH_BYTES = 4096
BATCH = 200
WORKERS = 4
ALIAS_SEPARATOR = "\x1f"
SIDECAR_FROM_BYTES = 1 << 20


class _Work:
    """A transcript to re-read; `old` is (indexed_bytes, tail_hash, inode, last_prompt) of its row."""

    __slots__ = ("folder", "inode", "meta_sig", "mtime_ns", "old", "path", "size")

    def __init__(self, path: str, folder: str, size: int, mtime_ns: int, inode: int, meta_sig: str,
                 old: tuple[object, ...] | None) -> None:
        self.path, self.folder, self.size, self.mtime_ns = path, folder, size, mtime_ns
        self.inode, self.meta_sig, self.old = inode, meta_sig, old


class RefreshReport:
    """What a refresh did: sessions re-read, bytes read for text, rows dropped, problems met."""

    def __init__(self) -> None:
        self.changed = 0
        self.bytes_read = 0
        self.removed = 0
        self.problems: list[str] | None = None


def _text_state(connection: sqlite3.Connection, path: str) -> tuple[object, ...] | None:
    """(indexed_bytes, tail_hash, inode, last_prompt) of a changed session's row."""
    row = connection.execute("SELECT indexed_bytes, tail_hash, inode, last_prompt FROM sessions WHERE path = ?",
                             (to_db(path),)).fetchone()
    return None if row is None else (row[0], row[1], row[2], from_db(row[3]))


def _tail_hash(path: str, end: int) -> str:
    import hashlib

    start = max(0, end - TAIL_HASH_BYTES)
    with open(path, "rb") as handle:
        handle.seek(start)
        return hashlib.blake2b(handle.read(end - start), digest_size=16).hexdigest()


def refresh(catalog: Catalog, folders: Iterable[str], *, problems: list[str],
            progress: Progress | None = None) -> RefreshReport:
    """Brings the rows of `folders` up to date (see the module docstring).

    Raises:
        sqlite3.Error: the catalog failed (the caller falls back to a directory scan).
    """
    connection = catalog.connection
    report = RefreshReport()
    work: list[_Work] = []
    states = []
    for folder in folders:
        state = changed_files(connection, folder, problems)
        if state is None:
            continue
        states.append(state)
        if state.gone:
            _forget(connection, state.gone, catalog.fts)
            report.removed += len(state.gone)
        for path, stat in state.transcripts.items():
            session_id = os.path.basename(path)[: -len(".jsonl")]
            meta_sig = state.metas.get(session_id, "")
            old = state.known.get(path)
            if old is not None and old[:4] == (stat.st_size, stat.st_mtime_ns, stat.st_ino, meta_sig):
                continue
            work.append(_Work(path, folder, stat.st_size, stat.st_mtime_ns, stat.st_ino, meta_sig,
                              None if old is None else _text_state(connection, path)))
    if not work:
        record_snapshots(connection, states)
        return report
    total = sum(item.size for item in work)
    done = [0]
    import threading

    lock = threading.Lock()

    def advance(count: int) -> None:  # from the reading threads, as they go
        with lock:
            done[0] += count
            if progress is not None:
                progress(min(done[0], total), total)

    from concurrent.futures import ThreadPoolExecutor  # only when something changed: it imports logging

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for start in range(0, len(work), BATCH):
            batch = work[start:start + BATCH]
            results = list(pool.map(lambda item: _read(item, advance), batch))
            connection.execute("BEGIN IMMEDIATE")
            try:
                for item, (summary, texts, offset, tail, reset) in zip(batch, results):
                    _store(connection, catalog.fts, item, summary, texts, offset, tail, reset)
                    report.bytes_read += item.size - (0 if reset else offset_of(item))
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            report.changed += len(results)
    record_snapshots(connection, states)
    return report


def offset_of(item: _Work) -> int:
    """Where the text pass of `item`'s old row stopped (0 without one)."""
    indexed = item.old[0] if item.old is not None else 0
    return indexed if isinstance(indexed, int) else 0


def _read(item: _Work, advance: Callable[[int], None]) -> tuple[SessionSummary, list[TextRow], int, str, bool]:
    """(summary, new text rows, offset read to, tail hash there, whether old text rows go)."""
    start, reset = 0, True
    if item.old is not None:
        indexed, tail, inode, _prompt = item.old
        if isinstance(indexed, int) and inode == item.inode and indexed <= item.size:
            try:
                if _tail_hash(item.path, indexed) == tail:
                    start, reset = indexed, False
            except OSError:
                pass
    from ..sessions.reader import open_session

    advance(start)  # the part indexed before is not read again
    try:
        # Searchable text is the text index's (catalog/text_index.py), built by `sessions search`.
        texts: list[TextRow] = []
        offset, prompt = item.size, last_prompt_of(item.path)
        advance(item.size - start)
        # A small transcript scans in less time than writing (and fsyncing) its index sidecar takes.
        summary = summarize(open_session(item.path, use_index=item.size >= SIDECAR_FROM_BYTES), last_prompt=prompt)
        return summary, texts, offset, _tail_hash(item.path, offset), reset
    except (CommandcodeError, OSError) as error:
        message = str(error)
        reason = message if not message.startswith(f"{item.path}: ") else message[len(item.path) + 2:]
    except Exception as error:  # a transcript must never break the listing of its neighbours
        reason = f"cannot be listed ({type(error).__name__}: {error})"
    return damaged_summary(item.path, reason), [], 0, "", True


def _forget(connection: sqlite3.Connection, paths: list[str], fts: bool) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        for path in paths:
            connection.execute("DELETE FROM sessions WHERE path = ?", (to_db(path),))
            connection.execute("DELETE FROM texts WHERE path = ?", (searchable(path),))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def _store(connection: sqlite3.Connection, fts: bool, item: _Work, summary: SessionSummary, texts: list[TextRow],
           offset: int, tail: str, reset: bool) -> None:
    if reset:
        connection.execute("DELETE FROM texts WHERE path = ?", (searchable(item.path),))
    if texts:
        path = searchable(item.path)
        connection.executemany("INSERT INTO texts (text, path, entry, ts, kind) VALUES (?, ?, ?, ?, ?)",
                               [(searchable(text), path, searchable(entry), searchable(stamp), kind)
                                for entry, stamp, kind, text in texts])
    values = {
        "path": item.path, "folder": item.folder, "id": summary.id, "size": item.size, "mtime_ns": item.mtime_ns,
        "inode": item.inode, "meta_sig": item.meta_sig, "indexed_bytes": offset, "tail_hash": tail,
        "name": summary.name, "created": summary.created, "modified": summary.modified,
        "sort_key": sort_key(summary.modified), "message_count": summary.message_count,
        "first_message": summary.first_message, "last_prompt": summary.last_prompt, "git_branch": summary.git_branch,
        "entrypoint": summary.entrypoint, "parent_session_id": summary.parent_session_id,
        "cwd": summary.cwd if summary.cwd_recorded else None,  # a synthesized header: each listing's own cwd
        "skipped_lines": summary.skipped_lines, "damaged": summary.damaged, "user_renamed": int(summary.user_renamed),
        "aliases": ALIAS_SEPARATOR.join(summary.aliases),
    }
    connection.execute(f"INSERT OR REPLACE INTO sessions ({', '.join(SESSION_COLUMNS)}) "
                       f"VALUES ({', '.join('?' for _ in SESSION_COLUMNS)})", [to_db(values[column]) for column in SESSION_COLUMNS])


ROW_COLUMNS = ("id", "name", "created", "modified", "message_count", "first_message", "git_branch", "entrypoint",
               "parent_session_id", "path", "cwd", "skipped_lines", "size", "last_prompt", "damaged", "user_renamed",
               "aliases")
ROW_SELECT = ", ".join(ROW_COLUMNS)


def row_summary(row: tuple[object, ...]) -> SessionSummary:
    """A `SessionSummary` from a row selected with `ROW_SELECT`."""
    values = dict(zip(ROW_COLUMNS, map(from_db, row)))
    aliases = values.pop("aliases")
    values["user_renamed"] = bool(values["user_renamed"])
    if values["cwd"] is None:  # the header names no cwd: as `Session.cwd` has it, the reader's own
        values["cwd"], values["cwd_recorded"] = os.getcwd(), False
    return SessionSummary(**values, aliases=tuple(str(aliases).split(ALIAS_SEPARATOR)) if aliases else ())


def rows_in(catalog: Catalog, folders: list[str], *, headless: bool,
            branch: str | None = None) -> Iterable[SessionSummary]:
    """Rows of `folders`, newest first (headless ones only when `headless`; one branch when given)."""
    where = [f"folder IN ({', '.join('?' for _ in folders)})"]
    parameters: list[object] = [to_db(folder) for folder in folders]
    if not headless:
        where.append("(entrypoint IS NULL OR entrypoint != 'print')")
    if branch is not None:
        where.append("git_branch = ?")
        parameters.append(to_db(branch))
    cursor = catalog.connection.execute(
        f"SELECT {ROW_SELECT} FROM sessions WHERE {' AND '.join(where)} "
        "ORDER BY sort_key DESC, created DESC, id DESC", parameters)
    return (row_summary(row) for row in cursor)


def related(catalog: Catalog, ids: set[str]) -> dict[str, SessionSummary]:
    """Rows of these sessions and of every fork of them (to label lineage)."""
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    cursor = catalog.connection.execute(
        f"SELECT {ROW_SELECT} FROM sessions WHERE id IN ({marks}) OR parent_session_id IN ({marks})", [to_db(value) for value in (*ids, *ids)])
    return {summary.id: summary for summary in map(row_summary, cursor)}
