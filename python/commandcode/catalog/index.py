"""Keeping the catalog's session rows in step with the transcripts, and reading listing rows out of it.

`refresh(catalog, folders)` finds, for each project folder, the transcripts whose size, mtime,
inode or ctime (or meta sidecar's size and mtime) differ from their rows, or whose content
fingerprint does when the folder's snapshot cannot be trusted (`freshness.changed_files`: an
unchanged folder costs one native directory read and no row read). The changed ones are
summarized by the Rust core in one parallel pass (`native_summary.summarize_paths`: through a big
transcript's index sidecar, so only appended bytes are scanned), and their rows replaced. No
searchable text is read here: a listing, `-c`, `-r` or a name check never waits for text
indexing (`text_index.py`, the search's own index, built off this path). Rows of transcripts that
are gone are dropped (the cache forgets; no session file is ever touched). Work is committed in
batches (the next batch summarized while one is written), so another listing waits at most one batch. `progress(done_bytes, total_bytes)` is
called after each batch of a large refresh (the CLI draws a progress bar with it).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator

from .db import ROW_STATE_COLUMNS, Catalog, from_db, to_db
from .freshness import META_SUFFIX, FolderState, changed_files, record_snapshots
from .native_summary import SIDECAR_FROM_BYTES, Summarized, summarize_paths
from .summary import SessionSummary
from .times import sort_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

Progress = Callable[[int, int], None]
BATCH = 2000
ALIAS_SEPARATOR = "\x1f"


class _Work:
    """A transcript to summarize again."""

    __slots__ = ("ctime_ns", "folder", "inode", "meta_sig", "mtime_ns", "path", "size", "stat")

    def __init__(self, path: str, folder: str, stat: os.stat_result, meta_sig: str) -> None:
        self.path, self.folder, self.size, self.mtime_ns, self.stat = path, folder, stat.st_size, stat.st_mtime_ns, stat
        self.inode, self.ctime_ns, self.meta_sig = stat.st_ino, stat.st_ctime_ns, meta_sig


class RefreshReport:
    """What a refresh did: sessions re-read, bytes they hold, rows dropped, problems met."""

    def __init__(self) -> None:
        self.changed = 0
        self.bytes_read = 0
        self.removed = 0
        self.problems: list[str] | None = None


def pending(connection: sqlite3.Connection, state: FolderState) -> list[_Work]:
    """The transcripts of a folder whose rows are missing or stale."""
    work = []
    for path, stat in state.transcripts.items():
        session_id = os.path.basename(path)[: -len(".jsonl")]
        meta_sig = state.metas.get(session_id, "")
        old = state.known.get(path)
        if old is not None and tuple(old[:5]) == (stat.st_size, stat.st_mtime_ns, stat.st_ino, meta_sig,
                                                  stat.st_ctime_ns):
            continue
        work.append(_Work(path, state.folder, stat, meta_sig))
    return work


def refresh(catalog: Catalog, folders: Iterable[str], *, problems: list[str],
            progress: Progress | None = None) -> RefreshReport:
    """Brings the rows of `folders` up to date (see the module docstring).

    Raises:
        sqlite3.Error: the catalog failed (the caller falls back to a directory scan).
    """
    connection = catalog.connection
    report = RefreshReport()
    work: list[_Work] = []
    metas: set[str] = set()  # the meta sidecars present, as the folder states saw them
    states = []
    for folder in folders:
        state = changed_files(connection, folder, problems)
        if state is None:
            continue
        states.append(state)
        if state.gone:
            forget(connection, state.gone)
            report.removed += len(state.gone)
        work += pending(connection, state)
        metas.update(os.path.join(state.folder, session_id + META_SUFFIX) for session_id in state.metas)
    if not work:
        record_snapshots(connection, states)
        return report
    # The big ones first (both cores stay busy to the end), the rest in path order: each batch then
    # grows the path-keyed table and index at their ends instead of rewriting pages all over them.
    work.sort(key=_work_order)
    total = sum(item.size for item in work)
    done = 0
    # Thousands of rows are built and dropped here: the cycle collector would walk them all, in
    # vain (they hold no cycles), several times over.
    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        for batch, results in _summarized(work, metas):
            connection.execute("BEGIN IMMEDIATE")
            try:
                rows = [_values(item, summary, fingerprint) for item, (summary, fingerprint) in zip(batch, results)]
                rows.sort(key=_path_order)  # the unique and covering indexes (both by path) grow at their ends
                connection.executemany(_UPSERT, rows)
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            report.changed += len(batch)
            done += sum(item.size for item in batch)
            report.bytes_read = done
            if progress is not None:
                progress(done, total)
    finally:
        if collecting:
            gc.enable()
    record_snapshots(connection, states)
    return report


def _summarized(work: list[_Work], metas: set[str]) -> Iterator[tuple[list[_Work], list[Summarized]]]:
    """Each batch of `work` with its summaries, the next batch summarized in a thread while the
    caller writes this one (the core releases the GIL, and so does SQLite while it writes)."""
    batches = [work[start:start + BATCH] for start in range(0, len(work), BATCH)]

    def summarize(batch: list[_Work], into: list[list[Summarized] | BaseException]) -> None:
        try:
            into.append(summarize_paths([item.path for item in batch], [item.stat for item in batch], metas))
        except BaseException as error:  # met again by the caller
            into.append(error)

    ahead: tuple[threading.Thread, list[list[Summarized] | BaseException]] | None = None
    try:
        for number, batch in enumerate(batches):
            found: list[list[Summarized] | BaseException] = []
            if ahead is None:
                summarize(batch, found)
            else:
                ahead[0].join()
                found, ahead = ahead[1], None
            if number + 1 < len(batches):
                into: list[list[Summarized] | BaseException] = []
                ahead = (threading.Thread(target=summarize, args=(batches[number + 1], into), daemon=True), into)
                ahead[0].start()
            if isinstance(found[0], BaseException):
                raise found[0]
            yield batch, found[0]
    finally:
        if ahead is not None:  # the caller stopped early: the thread is not left behind
            ahead[0].join()


def _work_order(item: _Work) -> tuple[int, int, bytes]:
    big = item.size >= SIDECAR_FROM_BYTES
    return (0 if big else 1, -item.size if big else 0, item.path.encode("utf-8", "surrogatepass"))


def _path_order(values: list[object]) -> bytes:
    path = values[0]
    return path if isinstance(path, bytes) else str(path).encode("utf-8", "surrogatepass")


def forget(connection: sqlite3.Connection, paths: list[str]) -> None:
    """Drops the rows (and text rows) of transcripts that are gone."""
    from .db import searchable

    connection.execute("BEGIN IMMEDIATE")
    try:
        for path in paths:
            connection.execute("DELETE FROM sessions WHERE path = ?", (to_db(path),))
            connection.execute("DELETE FROM texts WHERE path = ?", (searchable(path),))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


_UPSERT = (f"INSERT INTO sessions ({', '.join(ROW_STATE_COLUMNS)}) VALUES ({', '.join('?' for _ in ROW_STATE_COLUMNS)}) "
           "ON CONFLICT(path) DO UPDATE SET "
           + ", ".join(f"{column} = excluded.{column}" for column in ROW_STATE_COLUMNS if column != "path"))
"""Writes a row; the text pass's own columns (`TEXT_STATE_COLUMNS`) of an existing row are kept."""


def _values(item: _Work, summary: SessionSummary, fingerprint: str) -> list[object]:
    """The `ROW_STATE_COLUMNS` of a row, as stored (in that order)."""
    values = (
        item.path, item.folder, summary.id, item.size, item.mtime_ns, item.inode, item.meta_sig, item.ctime_ns,
        fingerprint, summary.name, summary.created, summary.modified, sort_key(summary.modified),
        summary.message_count, summary.first_message, summary.last_prompt, summary.git_branch, summary.entrypoint,
        summary.parent_session_id,
        summary.cwd if summary.cwd_recorded else None,  # a synthesized header: each listing's own cwd
        summary.skipped_lines, summary.damaged, int(summary.user_renamed), ALIAS_SEPARATOR.join(summary.aliases),
    )
    # only text that is not ASCII can hold a lone surrogate (`to_db`): the rest goes as it is
    return [to_db(value) if type(value) is str and not value.isascii() else value for value in values]


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


def rows_in(catalog: Catalog, folders: list[str], *, headless: bool | Literal["only"],
            branch: str | None = None) -> Iterable[SessionSummary]:
    """Rows of `folders`, newest first (headless ones only when `headless`; with "only", just
    they and the rows of transcripts that cannot be opened; one branch when given)."""
    where = [f"folder IN ({', '.join('?' for _ in folders)})"]
    parameters: list[object] = [to_db(folder) for folder in folders]
    if not headless:
        where.append("(entrypoint IS NULL OR entrypoint != 'print' OR (name IS NOT NULL AND name != ''))")  # `headless`
    elif headless == "only":  # an unopened row (damaged, no cwd) is still reported to the caller
        where.append("(entrypoint = 'print' OR (damaged IS NOT NULL AND cwd = ''))")
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
