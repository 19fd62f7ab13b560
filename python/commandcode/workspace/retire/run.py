"""Running a sweep: archive or delete each chosen session with everything that belongs to it.

For each session (its writer lock held throughout, so nobody opens it meanwhile):

1. with `archive`, its archive is written whole (`archive.write_archive`);
2. a record `sweep/<sid>.json` names what goes (files, index, scratchpad) and the transcript's
   size and mtime, written atomically;
3. the transcript goes first (the session leaves every listing at once), then the sidecars, the
   real CLI's blobs, the index sidecar and the scratchpad;
4. the record is removed.

A sweep killed anywhere is finished by the next one (`finish_interrupted`): a record whose
transcript is gone, or still the one recorded, is completed; one whose transcript changed since
(the session was resumed: impossible while the lock was held, but a record outlives its process)
is dropped and the session kept. Then the store's garbage collection runs, which removes the
objects no remaining session needs (those of archived sessions are in their archives).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...checkpoints.gc import GcReport, collect
from ...checkpoints.store import BackupStore, journal_path
from ...config.paths import data_dir
from ...errors import SessionLockedError
from ...sessions.facts import last_activity
from ...sessions.lock import WriterLock
from ...storage.durable import atomic_write, ensure_dir, fsync_dir
from ...storage.regular import read_if_exists
from ..archive import write_archive
from ..scratchpad import delete_scratchpad, sweep_scratchpads
from .plan import Candidate, SweepPlan

Progress = Callable[[int, int, str], None]
AUTO_INTERVAL_SECONDS = 86400.0
AUTO_STAMP = "last-auto-sweep"


def sweep_dir() -> Path:
    """`<data dir>/sweep`: records of sweeps in progress, and the time of the last automatic one."""
    return data_dir() / "sweep"


@dataclass
class SweepReport:
    """What a sweep did (or, dry run, would do)."""

    mode: str  # "archive" or "delete"
    dry_run: bool
    sessions: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    freed_bytes: int = 0
    archive_bytes: int = 0
    scratchpads: int = 0
    scratchpad_bytes: int = 0
    finished_interrupted: int = 0
    gc: GcReport | None = None
    disabled_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "dry_run": self.dry_run, "sessions": self.sessions, "skipped": self.skipped,
                "freed_bytes": self.freed_bytes + (self.gc.deleted_bytes if self.gc else 0),
                "session_bytes": self.freed_bytes, "archive_bytes": self.archive_bytes,
                "stale_scratchpads": self.scratchpads, "stale_scratchpad_bytes": self.scratchpad_bytes,
                "finished_interrupted": self.finished_interrupted, "disabled_by": self.disabled_by,
                "gc": self.gc.to_json() if self.gc else None}


def _record_path(session_id: str) -> Path:
    return sweep_dir() / f"{session_id}.json"


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass


def _finish(record: dict[str, Any]) -> None:
    """Deletes what a record names, the transcript first, then drops the record."""
    transcript = Path(record["transcript"])
    _remove(transcript)
    fsync_dir(transcript.parent)
    for name in record.get("parts", []):
        _remove(Path(name))
    history = record.get("fileHistory")
    if isinstance(history, str) and os.path.isdir(history) and not os.listdir(history):
        os.rmdir(history)
    runs = transcript.with_suffix("") / "subagents"  # `<sid>/subagents/`, emptied above (format §21)
    for folder in (runs, runs.parent):
        with contextlib.suppress(OSError):  # not empty (something else lives there) or not there
            os.rmdir(folder)
    if record.get("cwd"):
        delete_scratchpad(record["sessionId"], record["cwd"])
    _record_path(record["sessionId"]).unlink(missing_ok=True)


def finish_interrupted() -> int:
    """Completes every sweep a crash interrupted; returns how many sessions it finished."""
    folder = sweep_dir()
    finished = 0
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        data = read_if_exists(path)
        try:
            record = json.loads(data or b"")
        except ValueError:
            path.unlink(missing_ok=True)  # torn before it was renamed into place cannot happen; a stray file
            continue
        if not isinstance(record, dict) or not isinstance(record.get("transcript"), str):
            continue
        transcript = Path(record["transcript"])
        try:
            status = os.lstat(transcript)
            unchanged = (status.st_size, status.st_mtime_ns) == (record.get("size"), record.get("mtimeNs"))
        except FileNotFoundError:
            unchanged = True
        if not unchanged:
            path.unlink(missing_ok=True)  # the session changed since: it stays
            continue
        try:
            with WriterLock(transcript):
                _finish(record)
        except SessionLockedError:
            continue  # open again right now: the next sweep finishes it
        finished += 1
    return finished


class _ChangedSincePlan(Exception):
    pass


def _sweep_one(candidate: Candidate, *, store: BackupStore | None) -> dict[str, Any]:
    files = candidate.files
    with WriterLock(files.transcript):
        if last_activity(files.transcript) != candidate.last_activity:
            raise _ChangedSincePlan  # resumed between the plan and the lock: it is not old any more
        status = os.lstat(files.transcript)
        row: dict[str, Any] = {"id": candidate.session_id, "project": os.path.basename(files.folder),
                               "name": candidate.name, "last_activity": candidate.last_activity,
                               "bytes": candidate.session_bytes + candidate.index_bytes + candidate.scratchpad_bytes}
        if store is not None:  # archiving
            info = write_archive(os.path.basename(files.folder), candidate.session_id, candidate.parts,
                                 sorted(candidate.own), sorted(candidate.shared), store)
            row.update({"archive": str(info.path), "archive_bytes": info.size})
        record = {"sessionId": candidate.session_id, "transcript": str(files.transcript), "size": status.st_size,
                  "mtimeNs": status.st_mtime_ns, "cwd": candidate.cwd, "fileHistory": str(files.file_history),
                  "parts": [str(path) for path in candidate.parts[1:]] + [str(p) for p in _index_paths(candidate)]
                  + [str(path) for path in _journal_lock(candidate.session_id)]}
        ensure_dir(sweep_dir())
        atomic_write(_record_path(candidate.session_id), json.dumps(record).encode("utf-8", "surrogateescape"))
        _finish(record)
    return row


def _journal_lock(session_id: str) -> list[Path]:
    """The session's restore lock file `journals/<sid>.json.lock`, which its first rewind made and
    every later one reuses: it goes with the session (the plan keeps a session whose journal is
    pending, and the writer lock held here keeps a rewind out meanwhile)."""
    lock = Path(f"{journal_path(session_id)}.lock")
    return [lock] if lock.is_file() and not lock.is_symlink() else []


def _index_paths(candidate: Candidate) -> list[Path]:
    from ..parts import index_part

    return [index_part(candidate.files)]


def run_sweep(plan: SweepPlan, *, archive: bool, dry_run: bool, progress: Progress | None = None,
              collect_garbage: bool = True) -> SweepReport:
    """Archives or deletes the plan's sessions, sweeps stale scratchpads, then collects the store.

    A session that became open since the plan was made is skipped (`skipped`, "open now")."""
    report = SweepReport("archive" if archive else "delete", dry_run, disabled_by=plan.disabled_by)
    if not dry_run:
        report.finished_interrupted = finish_interrupted()
    report.skipped = [{"id": c.session_id, "reason": c.skip} for c in plan.kept if c.skip != "active recently"]
    store = BackupStore() if archive and not dry_run and plan.chosen else None
    total = len(plan.chosen)
    for number, candidate in enumerate(plan.chosen, start=1):
        if progress is not None:
            progress(number - 1, total, candidate.session_id)
        if not dry_run and not candidate.files.transcript.exists():
            continue  # finished just now, from the record of an interrupted sweep
        if dry_run:
            report.sessions.append({"id": candidate.session_id, "project": os.path.basename(candidate.files.folder),
                                    "name": candidate.name, "last_activity": candidate.last_activity,
                                    "bytes": candidate.session_bytes + candidate.index_bytes + candidate.scratchpad_bytes})
        else:
            try:
                row = _sweep_one(candidate, store=store)
            except SessionLockedError:
                report.skipped.append({"id": candidate.session_id, "reason": "open now"})
                continue
            except _ChangedSincePlan:
                report.skipped.append({"id": candidate.session_id, "reason": "active recently"})
                continue
            report.archive_bytes += row.get("archive_bytes", 0)
            report.sessions.append(row)
        report.freed_bytes += report.sessions[-1]["bytes"]
    if progress is not None:
        progress(total, total, "")
    if plan.disabled_by is None:
        keep = frozenset(c.session_id for c in plan.kept if c.skip == "open now")
        report.scratchpads, report.scratchpad_bytes = sweep_scratchpads(keep=keep, dry_run=dry_run)
    if collect_garbage:
        report.gc = collect(dry_run=dry_run)
        if dry_run:  # what the sweep itself would leave unreferenced
            report.gc.deleted_bytes += plan.object_bytes
    return report


# --------------------------------------------------------------------------------------------
# Once a day, in the background


def maybe_auto_sweep(cwd: str | os.PathLike[str], *, now: float | None = None, keep: Sequence[str] = ()) -> bool:
    """Starts the daily automatic sweep in the background if the last one is a day old (for the
    shell to call at start), leaving the sessions `keep` names (the shell's own) alone. It archives
    unless the settings chose deletion (`cleanupMode: "delete"`). Returns whether one was started.
    Never raises: retention is housekeeping."""
    moment = time.time() if now is None else now
    stamp = sweep_dir() / AUTO_STAMP
    try:
        if moment - os.stat(stamp).st_mtime < AUTO_INTERVAL_SECONDS:
            return False
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        ensure_dir(sweep_dir())
        atomic_write(stamp, f"{moment:.0f}\n".encode())
        kept = [argument for session_id in keep for argument in ("--keep", session_id)]
        subprocess.Popen([sys.executable, "-m", "commandcode", "sweep", "--auto", "--quiet", *kept], cwd=os.fspath(cwd),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:
        return False
    return True
