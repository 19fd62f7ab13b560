"""The shell-tracking baseline kept across processes: the `<sid>.shell-baseline.json` sidecar.

Owns reading and writing the sidecar (format: `docs/format.md` §6.2). A `commandcode -p` process
exits right after its turn; without this file the next `-p` in the same session would read and
hash the whole project again. With it, the next process loads the stat cache and re-reads only
the files whose stat key (size, mtime_ns, inode, mode) changed meanwhile.

The sidecar is a cache and is never trusted over the disk: it is ignored when its version or
project folder differ, or when it cannot be parsed; an entry whose object is missing from the
store is dropped (its file is read again). Because the file names every baseline object by its
64-hex digest, the store's garbage collection keeps them (`gc.sidecar_digests`): a session's
baseline is a GC root for as long as the session has the file.

Written whole and atomically (temp, fsync, rename; `storage.durable.atomic_write`), only from
the tracker's background thread or when the session closes, never inside a `bash` call.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..storage.durable import atomic_write
from ..storage.regular import read_if_exists
from . import store as backups

SUFFIX = ".shell-baseline.json"
VERSION = 1

Row = tuple[str, tuple[int, int, int, int], str, bool]
"""(absolute path, stat key, content id, stored) of one file."""


def load(path: Path, cwd: str, store: backups.BackupStore) -> list[Row]:
    """The rows of the sidecar at `path` for the project `cwd` ([] when missing, stale or damaged)."""
    try:
        data = read_if_exists(path)
    except OSError:
        return []
    if not data:
        return []
    try:
        document = json.loads(data)
        if not isinstance(document, dict) or document.get("version") != VERSION or document.get("cwd") != cwd:
            return []
        base = cwd + os.sep
        rows: list[Row] = []
        for name, (size, mtime_ns, inode, mode, content_id, stored) in document["files"].items():
            key = (int(size), int(mtime_ns), int(inode), int(mode))
            if stored and not store.contains(content_id):
                continue  # removed from the store some other way: read the file again
            rows.append((base + name, key, str(content_id), bool(stored)))
        return rows
    except (ValueError, TypeError, KeyError, AttributeError):
        return []


def save(path: Path, cwd: str, rows: list[Row]) -> None:
    """Replaces the sidecar with `rows` (paths outside `cwd` are left out)."""
    base = cwd + os.sep
    files = {name[len(base):]: [*key, content_id, int(stored)]
             for name, key, content_id, stored in rows if name.startswith(base)}
    text = json.dumps({"version": VERSION, "cwd": cwd, "files": files}, separators=(",", ":"))
    atomic_write(path, text.encode("utf-8", errors="surrogateescape"))
