"""What a rewind will do to each file, before it does it: the preview of `rewind --dry-run [--diff]`
and of the rewind menu.

One row per file: `path`, `action` (`restored`: it exists and gets older bytes back;
`recreated`: it is gone and comes back; `deleted`: a turn created it; `unchanged`: it already
holds that state; `left alone`: over the 10 MB cap or a symlink, never backed up, with `reason`),
and `outside_edit`: `null`, or `{"mtime": ISO}` when the file was changed outside the tracked
tools since the session last left it (the real rewind refuses those without `--force`). With
`diff`, a text file gets a unified `diff` (current → restored) and a binary one `binary: {old,
new}` sizes and blake3 hashes.
"""

from __future__ import annotations

import difflib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..storage.regular import read_regular
from . import store as backups
from .rewind_result import RewindResult

MAX_DIFF_LINES = 2_000


def fill_preview(result: RewindResult, store: backups.BackupStore, cwd: Path, *, diff: bool) -> None:
    """Sets `result.files` from a dry run's restore check (`result.preview_outcome`)."""
    outcome = result.preview_outcome
    targets = {os.fspath(target.path): target for target in result.preview_targets}
    outside = {os.fspath(path) for path in result.changed_outside}
    rows: list[dict[str, Any]] = []
    for change in outcome.changes if outcome is not None else []:
        key, path = os.fspath(change.path), Path(change.path)
        current = _current(path)
        if change.action == "delete":
            action = "deleted"
        elif change.action == "unchanged":
            action = "unchanged"
        else:
            action = "restored" if current is not None else "recreated"
        row: dict[str, Any] = {"path": key, "action": action,
                               "outside_edit": _edit_time(path) if (change.changed_outside or key in outside) else None}
        target = targets.get(key)
        if diff and change.action != "unchanged" and target is not None:
            row.update(_difference(_shown(path, cwd), current, _wanted(store, target)))
        rows.append(row)
    for skipped in result.skipped:
        rows.append({"path": os.fspath(skipped.path), "action": "left alone", "reason": skipped.reason,
                     "outside_edit": None})
    rows.sort(key=lambda row: row["path"])
    result.files = rows


def _current(path: Path) -> bytes | None:
    try:
        return read_regular(path, limit=backups.MAX_BACKUP_SIZE)
    except OSError:
        return None


def _wanted(store: backups.BackupStore, target: backups.RestoreTarget) -> bytes | None:
    if target.digest is None:
        return None
    try:
        if target.algorithm == backups.BLAKE3:
            return store.read(target.digest)
        return read_regular((target.blob_folder or Path()) / target.digest)
    except Exception:  # a missing or corrupt object (BackupIntegrityError, OSError): the restore check reports it
        return None


def _edit_time(path: Path) -> dict[str, Any]:
    try:
        moment = datetime.fromtimestamp(os.lstat(path).st_mtime, tz=UTC)
    except OSError:
        return {"mtime": None}
    return {"mtime": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")}


def _text(data: bytes | None) -> str | None:
    if data is None:
        return ""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _shown(path: Path, cwd: Path) -> str:
    """The name a diff header gives a file: relative to the session's folder, as git shows it."""
    try:
        return os.fspath(path.relative_to(cwd))
    except ValueError:
        return os.fspath(path)


def _difference(name: str, old: bytes | None, new: bytes | None) -> dict[str, Any]:
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        return {"binary": {"old": _facts(old), "new": _facts(new)}}
    lines = list(difflib.unified_diff(old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                      fromfile=f"a/{name}" if old is not None else "/dev/null",
                                      tofile=f"b/{name}" if new is not None else "/dev/null"))
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... {len(lines) - MAX_DIFF_LINES} more diff lines\n"]
    return {"diff": "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)}


def _facts(data: bytes | None) -> dict[str, Any] | None:
    return None if data is None else {"size": len(data), "hash": backups.content_id(data)}
