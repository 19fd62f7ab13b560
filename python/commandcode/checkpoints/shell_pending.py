"""`bash` calls under way, noted durably before they run: a command killed -9 together with its
agent is still undone by a rewind of its turn.

Owns the `<sid>.shell-pending.json` note (format §6.3). Shell tracking records what a command
changed when it ends (`shell_tracking.py`); a process killed meanwhile never gets there. So
before the first of a turn's overlapping `bash` calls starts, once the baseline is current and
its sidecar (`shell_baseline.py`) on disk, the manager writes this note (temp, fsync, rename):
the checkpoint the commands' changes belong to, the process running them, the stamp of the
baseline sidecar it counts on, and what the baseline's sidecar lacks: the symlinks, FIFOs,
sockets and hollow folders before the commands, the device nodes, the folders git ignores whole
and the folders the project had (`StatTable.pin_folders`, so a created file's `missingDirs`
come out as after a command). The note is removed once the last command's changes are written
durably into the checkpoints file.

`recover`, when a session is opened for a turn (`CheckpointManager.for_session`) or rewound
(`rewind.py`), finishes what a killed process left: a note whose process is gone (no process of
its pid, or the machine booted since: `boot`, as the fork records have it, so a pid reused after
a reboot does not keep it), whose checkpoint still exists and whose baseline sidecar is unchanged
is replayed as the end of the commands (a tracker loaded from the sidecar compares the tree with
it), the changes go into the named checkpoint and the file is rewritten; then the note goes. An
edit tool's item the checkpoint got while the commands ran (after its first `recorded` items)
yields to the baseline's state of a file the commands changed, as at a command's own end
(`shell_recording.py`): what it read may be the command's output, not the state before. A note
of a process still running is left alone (it is that process's); one that cannot be used
(damaged, another project, a baseline rewritten since, a checkpoint gone) is removed without
touching anything else.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..sessions.files import SessionFiles
from ..sessions.unsynced import boot_id
from ..storage.durable import atomic_write, process_exists
from ..storage.regular import read_if_exists
from . import shell_baseline
from . import store as backups
from .ledger import stamp
from .records import Checkpoint, FileBackup, parse_checkpoints, read_checkpoints_data, resolve_path, write_checkpoints
from .shell_items import TreeState
from .shell_recording import record_changes
from .shell_tracking import ShellTracker

SUFFIX = ".shell-pending.json"
VERSION = 1


def note_path(files: SessionFiles) -> Path:
    return files.directory / (files.session_id + SUFFIX)


def sidecar_path(files: SessionFiles) -> Path:
    return files.directory / (files.session_id + shell_baseline.SUFFIX)


def note(files: SessionFiles, tracker: ShellTracker, checkpoint_id: str, recorded: int) -> bool:
    """Notes durably that commands start now in `checkpoint_id`, which holds `recorded` items,
    against the tracker's current baseline (call after `ShellTracker.before_shell`). False when it
    could not be noted (no baseline on disk, a failed write): the commands still run, tracked as
    before."""
    state = tracker.pending_state()
    baseline = stamp(sidecar_path(files)) if state is not None else None
    if state is None or baseline is None:
        return False
    document = {"version": VERSION, "cwd": tracker.cwd, "pid": os.getpid(), "checkpoint": checkpoint_id,
                "recorded": recorded, "baseline": list(baseline), **state}
    boot = boot_id()
    if boot is not None:
        document["boot"] = boot
    try:
        atomic_write(note_path(files), json.dumps(document, separators=(",", ":")).encode("utf-8", "surrogateescape"))
    except OSError:
        return False
    return True


def clear(files: SessionFiles) -> None:
    """Removes the note (the commands' changes are on disk)."""
    try:
        os.unlink(note_path(files))
    except OSError:
        pass


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = read_if_exists(path)
        document = json.loads(data) if data else None
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) and document.get("version") == VERSION else None


def _items(document: dict[str, Any]) -> dict[str, TreeState]:
    return {str(path): (kind, link, int(mode)) for path, kind, link, mode in document["items"]}


def _running(document: dict[str, Any]) -> bool:
    """Whether the process that wrote the note still runs: its pid names a process and the
    machine has not booted since (a note without `boot`, or where the system gives none, goes by
    the pid alone)."""
    pid = document.get("pid")
    if not isinstance(pid, int) or not process_exists(pid):
        return False
    boot = document.get("boot")
    return boot is None or boot == boot_id()


def _raced(record: Checkpoint, document: dict[str, Any], cwd: Path) -> dict[str, FileBackup]:
    """The edit-tool items `record` got while the noted commands ran (those after its first
    `recorded` items), by resolved path: what they read may be a command's output."""
    recorded = document.get("recorded")
    if not isinstance(recorded, int) or isinstance(recorded, bool) or recorded < 0:
        return {}  # a note without the count: its items stay as they are
    return {resolve_path(item.path, cwd): item for item in record.files[recorded:]
            if item.extra.get("source") != "shell"}


def recover(files: SessionFiles, cwd: Path, store: backups.BackupStore) -> bool:
    """Records what commands killed with their process changed (see the module docs); returns
    whether the checkpoints file was rewritten. Never raises: a note that cannot be used is
    dropped, and a failure to write leaves the note for the next open."""
    path = note_path(files)
    if not os.path.lexists(path):
        return False
    document = _load(path)
    if document is not None and _running(document):
        return False  # still running: that process records its commands itself
    try:
        if document is None or document.get("cwd") != os.path.abspath(cwd) \
                or stamp(sidecar_path(files)) != tuple(document.get("baseline") or ()):
            raise ValueError("stale")
        records = parse_checkpoints(read_checkpoints_data(files.checkpoints))
        record = next((record for record in records if record.id == document.get("checkpoint")), None)
        if record is None:
            raise ValueError("no checkpoint")
        tracker = ShellTracker(Path(document["cwd"]), store, sidecar=sidecar_path(files))
        changes = tracker.recover(_items(document), frozenset(map(str, document["devices"])),
                                  [str(folder) for folder in document["ignored"]],
                                  [str(folder) for folder in document["folders"]])
    except (ValueError, TypeError, KeyError, AttributeError):
        clear(files)
        return False
    except Exception:  # unreadable checkpoints, a failing walk: the next open tries again
        return False
    try:
        if changes:
            record_changes(record, changes, Path(document["cwd"]), _raced(record, document, Path(document["cwd"])))
            write_checkpoints(files.checkpoints, records)
    except OSError:
        tracker.stop(save=False)  # the baseline stays the note's: the next open tries again
        return False
    clear(files)
    tracker.stop()  # what the commands left becomes the baseline (stored by the next pass)
    return bool(changes)
