"""Which transcripts of a project folder changed since the catalog last read them.

The catalog must never show a stale row as current, so every listing looks at every transcript
and meta sidecar of the folders it covers. `changed_files` does that through the Rust core's
`folder_changes` (one directory read and one `fstatat` per file, compared with the folder's
snapshot from the last refresh, in the `folder_snapshots` table; a file's signature holds its
size, mtime, inode and ctime, so a rewrite that restores the size and mtime still shows): when nothing changed, the
folder costs one query and that call, and no row is read. When some files changed, only they
are stat-ed again and only their rows are read. The snapshot is trusted only while the folder's
row count is the one recorded with it (another program's refresh, or a catalog from an older
version, changes that); otherwise — and when the native check is missing or the folder cannot
be read by it — every file is stat-ed and every row compared, as before (`_full_pass`).

A snapshot is written only after the rows it describes are committed, and it holds the file
states seen *before* they were read, so a stale snapshot can only cause a needless re-read,
never a stale row.
"""

from __future__ import annotations

import os
import sqlite3
from stat import S_ISREG

from ..config.paths import is_transcript_name
from .db import from_db, to_db

META_SUFFIX = ".meta.json"
Stats = dict[str, os.stat_result]


class FolderState:
    """What one refresh saw of one folder: the transcripts to compare (`transcripts`, with their
    meta signatures in `metas` by session id, and their rows in `known`), the row paths whose
    files are gone, and the snapshot to record once the rows are committed (None: none)."""

    __slots__ = ("folder", "gone", "known", "metas", "snapshot", "transcripts")

    def __init__(self, folder: str, transcripts: Stats, metas: dict[str, str], known: dict[str, tuple[object, ...]],
                 gone: list[str], snapshot: bytes | None) -> None:
        self.folder, self.transcripts, self.metas, self.known = folder, transcripts, metas, known
        self.gone, self.snapshot = gone, snapshot


def meta_signature(stat: os.stat_result) -> str:
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def changed_files(connection: sqlite3.Connection, folder: str, problems: list[str]) -> FolderState | None:
    """The state of `folder` to compare with its rows; None when it cannot be listed (said in `problems`)."""
    quick = _quick_check(connection, folder)
    if quick is None:
        return _full_pass(connection, folder, problems, None)
    changed, gone_names, snapshot, trusted = quick
    if not trusted:
        return _full_pass(connection, folder, problems, snapshot)
    if not changed and not gone_names:
        return FolderState(folder, {}, {}, {}, [], None)
    transcripts: Stats = {}
    metas: dict[str, str] = {}
    gone: list[str] = []
    wanted: set[str] = set()
    for name in changed:
        if name.endswith(META_SUFFIX):
            wanted.add(name[: -len(META_SUFFIX)] + ".jsonl")
        elif is_transcript_name(name):
            wanted.add(name)
    for name in gone_names:
        if name.endswith(META_SUFFIX):
            wanted.add(name[: -len(META_SUFFIX)] + ".jsonl")
        elif is_transcript_name(name):
            gone.append(os.path.join(folder, name))
    for name in wanted:
        path = os.path.join(folder, name)
        try:
            stat = os.stat(path)
        except OSError:
            continue  # gone since: the next listing drops its row
        if not S_ISREG(stat.st_mode):
            continue
        transcripts[path] = stat
        session_id = name[: -len(".jsonl")]
        try:
            metas[session_id] = meta_signature(os.stat(os.path.join(folder, session_id + META_SUFFIX)))
        except OSError:
            pass
    known: dict[str, tuple[object, ...]] = {}
    for path in transcripts:
        row = connection.execute("SELECT size, mtime_ns, inode, meta_sig, ctime_ns FROM sessions WHERE path = ?",
                                 (to_db(path),)).fetchone()
        if row is not None:
            known[path] = tuple(row)
    return FolderState(folder, transcripts, metas, known, gone, snapshot)


def _quick_check(connection: sqlite3.Connection, folder: str) -> tuple[list[str], list[str], bytes, bool] | None:
    """(changed names, gone names, snapshot now, whether the old snapshot can be trusted), or
    None when the native check cannot be used here."""
    try:
        from .._native import folder_changes
    except ImportError:  # pragma: no cover - the core is always built with the package
        return None
    row = connection.execute("SELECT snapshot, rows FROM folder_snapshots WHERE folder = ?", (to_db(folder),)).fetchone()
    previous = row[0] if row is not None and isinstance(row[0], bytes) else b""
    try:
        changed, gone, snapshot = folder_changes(folder, previous)
    except OSError:
        return None  # missing or unreadable: the full pass says so (or finds nothing)
    trusted = row is not None and row[1] == _row_count(connection, folder)
    return changed, gone, snapshot, trusted


def _row_count(connection: sqlite3.Connection, folder: str) -> int:
    return int(connection.execute("SELECT count(*) FROM sessions INDEXED BY sessions_folder WHERE folder = ?",
                                  (to_db(folder),)).fetchone()[0])


def _full_pass(connection: sqlite3.Connection, folder: str, problems: list[str], snapshot: bytes | None) -> FolderState | None:
    """Every transcript stat-ed and every row of the folder read; a row whose file states all
    match is still checked against the transcript's content fingerprint (a snapshot that cannot be
    trusted may come from another program or machine)."""
    transcripts: Stats = {}
    metas: dict[str, str] = {}
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        entries = []
    except OSError as error:
        problems.append(f"{folder}: cannot be listed ({error.strerror or error}); its sessions are not shown")
        return None
    for entry in entries:
        name = entry.name
        try:
            if name.endswith(META_SUFFIX):
                metas[name[: -len(META_SUFFIX)]] = meta_signature(entry.stat())
            elif is_transcript_name(name):
                stat = entry.stat()
                if S_ISREG(stat.st_mode):  # never a FIFO (it would block) or a device
                    transcripts[entry.path] = stat
        except OSError:
            continue
    known: dict[str, tuple[object, ...]] = {str(from_db(row[0])): row[1:] for row in connection.execute(
        "SELECT path, size, mtime_ns, inode, meta_sig, ctime_ns, fingerprint FROM sessions INDEXED BY sessions_folder "
        "WHERE folder = ?", (to_db(folder),))}
    gone = [path for path in known if path not in transcripts]
    _check_fingerprints(known, transcripts, metas)
    return FolderState(folder, transcripts, metas, known, gone, snapshot)


def _check_fingerprints(known: dict[str, tuple[object, ...]], transcripts: Stats, metas: dict[str, str]) -> None:
    """Forgets the rows (in `known`) of transcripts that kept their file states but whose content
    fingerprint changed: they are summarized again."""
    same = []
    for path, row in known.items():
        stat = transcripts.get(path)
        meta = metas.get(os.path.basename(path)[: -len(".jsonl")], "")
        if stat is not None and tuple(row[:5]) == (stat.st_size, stat.st_mtime_ns, stat.st_ino, meta, stat.st_ctime_ns):
            same.append(path)
    if not same:
        return
    from .._native import fingerprints_of

    for path, fingerprint in zip(same, fingerprints_of(same)):
        if fingerprint != known[path][5]:
            del known[path]


def record_snapshots(connection: sqlite3.Connection, states: list[FolderState]) -> None:
    """Records the snapshots of `states` (after their rows are committed), with each folder's row count."""
    pending = [state for state in states if state.snapshot is not None]
    if not pending:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        for state in pending:
            connection.execute("INSERT OR REPLACE INTO folder_snapshots (folder, snapshot, rows) VALUES (?, ?, ?)",
                               (to_db(state.folder), state.snapshot, _row_count(connection, state.folder)))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
