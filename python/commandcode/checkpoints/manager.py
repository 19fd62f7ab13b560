"""The `CheckpointManager`: what the agent loop calls to record checkpoints and backups (format §6, §7).

Every non-meta user prompt opens a checkpoint; before `write_file`/`edit_file` change a file,
its bytes are backed up (only a path's first backup in a checkpoint counts); after the tool ran,
the digest it wrote is recorded, so a rewind can tell edits made outside the tracked tools from
our own. That after-digest is written with the next durable write, by `flush()` or when the
manager goes away, never fsynced alone: a lost one never loses a backup.

A symlink is never followed (`skipped: "symlink"`, with a notice); files over 10 MB are
`skipped: "too_large"`; retention is `retention.py`'s, object deletion `references.py`'s. Under
twice a file's size of free space, checkpointing pauses (`skipped: "disk_full"`) until twice
100 MiB is free again.

Threads: a session's sub-agents run tools on threads of their own, all into the parent's
checkpoint, so every method may be called from any thread. `editing(path)` is the write path of
the edit tools: it holds the file's process-wide lock (`storage/path_locks.py`, which the tools
take too) from the backup through the write, so the first item of a path in a checkpoint is the
state before that checkpoint's first write of it, whoever wrote; and a new checkpoint opens only
between writes, so each write is backed up into the checkpoint that is current when it lands.
One lock guards the records and the file (backups are read outside it, in parallel); `bash`
calls may overlap: the shell baseline is brought current only when none runs, so each one's
changes are found against a state from before all of them (`shell_recording.py`).
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict, Unpack

from ..config.context import ProjectContext, for_settings_of
from ..errors import CheckpointError
from ..sessions.files import SessionFiles
from ..storage.ids import iso_now, new_uuid
from ..storage.path_locks import path_lock
from . import compatible, shell_baseline, shell_pending
from . import store as backups
from .background import Worker
from .backup_items import FreeSpace, take_item
from .blob_rule import Enforcement
from .disk_pause import RESUME_FREE_BYTES as RESUME_FREE_BYTES  # re-exported: the pause is its own module
from .disk_pause import DiskPause
from .group_commit import DURABLE, IN_FLIGHT, GroupCommit
from .ledger import Ledger, stamp
from .leftovers import remove_leftovers
from .records import (
    SKIPPED_SYMLINK,
    SKIPPED_TOO_LARGE,
    Checkpoint,
    FileBackup,
    checkpoints_bytes,
    prompt_preview,
    read_checkpoints,
    resolve_path,
    write_checkpoints_data,
)
from .redo_points import newest_on_path
from .references import register_external_location, sweep_objects
from .retention import cap_notice, retained
from .shell_recording import record_changes
from .shell_tracking import ShellTracker, tracker_for

SWEEP_INTERVAL_SECONDS = 600.0


class ManagerOptions(TypedDict, total=False):
    """The keyword options of `CheckpointManager` (and of `for_session`, which passes them on)."""

    store: backups.BackupStore | None
    free_space: FreeSpace | None
    now: Callable[[], datetime] | None
    compatible_backups: bool | None
    project: ProjectContext | None


class CheckpointManager:
    """Records checkpoints and backups for one session, as the agent loop runs.

    The loop calls `open_checkpoint` at each non-meta user prompt, writes through `editing`
    (`backup_before_edit`, then `record_after_edit`), and optionally `flush()` at the end of a
    turn. Works for sessions without a transcript.
    """

    def __init__(self, files: SessionFiles, cwd: Path, *, store: backups.BackupStore | None = None,
                 free_space: FreeSpace | None = None, now: Callable[[], datetime] | None = None,
                 compatible_backups: bool | None = None, project: ProjectContext | None = None) -> None:
        self.files = files
        self.cwd = Path(cwd)
        self.project = for_settings_of(cwd, project)  # the caller's context (the session's), whose settings apply
        self.store = store if store is not None else backups.BackupStore()
        self._free_space = free_space if free_space is not None else backups.free_space
        self._now = now if now is not None else (lambda: datetime.now(UTC))
        self._ledger = Ledger(files.checkpoints, read_checkpoints(files.checkpoints))
        # Pending after-digests are written when the manager goes away or the process exits.
        weakref.finalize(self, self._ledger.flush_quietly)
        self._current: Checkpoint | None = None
        self._capped: list[int] = []  # turn numbers the backup cap dropped, not yet reported
        self._disk = DiskPause()
        self._last_sweep = 0.0
        self._registered = False
        # checkpoints.compatibleBackups (None: read from the settings at the first backup)
        self._compatible = compatible_backups
        self.shell: ShellTracker | None = None
        self._saving: threading.Event | None = None  # a write `_save_behind` queued
        self._commits = GroupCommit()  # the file's writes: concurrent writers share one (`group_commit.py`)
        self._enforced = False  # the backup rule ran over every record once (`_rule`)
        self._lock = threading.RLock()  # the records, the open checkpoint, the file's writes
        self._idle = threading.Condition(self._lock)
        self._writing = 0  # `editing` blocks between their backup and the end of their write
        self._opening = False  # a checkpoint is waiting for them to end before it opens
        self._shell_lock = threading.Lock()  # the tracker's state; taken before `_lock`, never after
        self._shells = 0  # `bash` calls between `before_shell` and `after_shell`
        self._shell_deferred = False  # a baseline refresh waits for the running commands to end
        self._noted = False  # the running commands are noted durably (`shell_pending.py`)
        self._raced: dict[str, FileBackup] = {}  # items backed up while a command ran (`shell_recording.py`)

    @classmethod
    def for_session(cls, files: SessionFiles, cwd: Path, **options: Unpack[ManagerOptions]) -> CheckpointManager:
        """Loads a session's checkpoints: finishes or undoes a restore a crash interrupted, drops
        checkpoints past retention, and sweeps objects no checkpoint references any more."""
        store = options["store"] = options.get("store") or backups.BackupStore()
        backups.recover_pending(files, cwd, store=store)
        shell_pending.recover(files, Path(cwd), store)  # commands killed with their process: recorded
        manager = cls(files, cwd, **options)
        remove_leftovers(files, manager.records, manager.cwd)  # temp files a killed write left
        if manager.apply_retention():
            manager._save()
            manager._sweep(force=True)
        return manager

    @property
    def records(self) -> list[Checkpoint]:
        return self._ledger.records

    @records.setter
    def records(self, value: list[Checkpoint]) -> None:
        self._ledger.records = value

    def reload(self) -> None:
        """Re-reads the file (after a rewind changed it); the open checkpoint is kept only if it
        is still there and no rewind came after it (the timeline's order is the file's). Unsaved
        after-digests are written first unless the file changed."""
        with self._lock:
            self._reload()

    def _reload(self) -> None:
        self.wait_saved()
        self._commits.settle()  # the file read back below is what is durable
        self._ledger.flush_quietly()
        self._ledger.dirty = False
        self._ledger = Ledger(self.files.checkpoints, read_checkpoints(self.files.checkpoints))
        weakref.finalize(self, self._ledger.flush_quietly)
        current = self._current
        self._current = next((record for record in self.records if current and record.id == current.id), None)
        if self._current is not None and self.records[-1] is not self._current and self.records[-1].is_redo_point:
            self._current = None  # a rewind came after it: later edits belong to the next turn's checkpoint

    @property
    def paused(self) -> bool:
        """Whether checkpointing is paused for lack of disk space (`disk_pause.py`)."""
        return self._disk.paused

    @property
    def current(self) -> Checkpoint | None:
        """The checkpoint opened by this manager's last `open_checkpoint`."""
        return self._current

    def open_checkpoint(self, prompt: str, message_count: int, last_message_id: str | None,
                        leaf_entry_id: str | None = None) -> None:
        """Opens the checkpoint of a new turn (before any of its tools run). `leaf_entry_id` is
        the transcript's leaf the turn starts from (a conversation rewind goes back to it). Waits
        for the writes under way (`editing`) to land first, in the checkpoint they were backed up in."""
        with self._idle:
            self._opening = True
            try:
                self._idle.wait_for(lambda: self._writing == 0)
                self._open(prompt, message_count, last_message_id, leaf_entry_id)
            finally:
                self._opening = False
                self._idle.notify_all()
        self._start_shell()  # the baseline (or a refresh) runs while the model is called

    def _open(self, prompt: str, message_count: int, last_message_id: str | None, leaf_entry_id: str | None) -> None:
        identifier = new_uuid()
        turns = [record for record in self.records if not record.is_redo_point]
        previous = max((record.turn_number for record in turns), default=0)
        parent = newest_on_path(self.records)
        extra: dict[str, Any] = {}
        if leaf_entry_id is not None:
            extra["leafEntryId"] = leaf_entry_id
        if parent is not None or turns:
            # null: the turn starts at the conversation's root although earlier checkpoints exist
            # (all rewound past); absent would mean "the record before it in file order"
            extra["parentCheckpointId"] = parent.id if parent is not None else None
        record = Checkpoint(
            id=identifier,
            message_id=identifier,
            turn_number=max(previous, len(turns)) + 1,
            created_at=iso_now(),
            prompt=prompt_preview(prompt),
            message_count=message_count,
            last_message_id=last_message_id,
            extra=extra,
        )
        self.records.append(record)
        self._current = record
        self._raced = {}
        dropped = self.apply_retention()
        self._save()
        if dropped:
            self._sweep(force=False)

    def _start_shell(self) -> None:
        """Starts the background baseline pass, or leaves it to the last running command's end
        (a pass while a command runs would take its changes for the baseline)."""
        with self._shell_lock:
            if self.shell is None:
                return
            if self._shells:
                self._shell_deferred = True
            else:
                self.shell.start()

    # ---- shell commands (`shell_tracking.py`)

    def track_shell(self, notify: Callable[[str], None]) -> None:
        """Starts tracking what `bash` calls change, when `checkpoints.trackShell` is on."""
        if self.shell is None:
            sidecar = self.files.directory / (self.files.session_id + shell_baseline.SUFFIX)
            self.shell = tracker_for(self.cwd, self.store, notify, project=self.project, sidecar=sidecar)
            if self.shell is not None:
                atexit.register(self.shell.stop)
                atexit.register(self.wait_saved)

    def close(self) -> None:
        """Ends shell tracking: its background thread is stopped and joined, its baseline kept
        (`AgentSession.close`); nothing of the manager runs after this returns."""
        with self._shell_lock:
            if self.shell is not None:
                atexit.unregister(self.shell.stop)
                atexit.unregister(self.wait_saved)
                self.shell.stop()
                self.shell = None
        with self._lock:
            self.wait_saved()
            self._ledger.flush_quietly()

    def before_shell(self) -> list[str]:
        """Call before a `bash` tool call: finishes the baseline and brings it current (unless
        other commands are running: the baseline from before them still holds for this one)."""
        with self._shell_lock:
            if self.shell is None:
                return []
            if not self._shells and self._current is not None:
                self.wait_saved()  # the last commands' note is gone (removed behind their records)
                self.shell.before_shell()
                self._noted = shell_pending.note(self.files, self.shell, self._current.id, len(self._current.files))
            self._shells += 1
            return self.shell.take_notices()

    def after_shell(self) -> list[str]:
        """Call after a `bash` tool call: records the files it created, changed or deleted in the
        open checkpoint, like edit-tool backups (`source: "shell"`), and writes the records.
        With commands still running on other threads, what they changed so far is found and
        recorded too (against the same baseline); the baseline is refreshed after the last."""
        with self._shell_lock:
            if self.shell is None:
                return []
            self._shells = max(0, self._shells - 1)
            with self._lock:
                record = self._current
                changes = self.shell.after_shell() if record is not None else []
                if record is not None:
                    record_changes(record, changes, self.cwd, self._raced)
                files, noted = self.files, self._noted and not self._shells
                if changes or noted:  # the note goes once the records are durable, behind them
                    self._save_behind(self.shell.worker, (lambda: shell_pending.clear(files)) if noted else None,
                                      changed=bool(changes))
                if not self._shells:
                    self._raced, self._noted = {}, False
                    self.shell.end_commands()
            if not self._shells and (changes or self._shell_deferred):
                self._shell_deferred = False
                self.shell.start()  # then stores what the command left, while the next model call runs
            return self.shell.take_notices()

    @contextmanager
    def editing(self, path: str) -> Iterator[list[str]]:
        """The write of `path` by an edit tool, from its backup (`backup_before_edit`, whose
        notices the block gets) to the end of the block, where the tool has written it (then
        `record_after_edit`): no other thread writes the file meanwhile, and no checkpoint
        opens until the block ends.

        Raises:
            CheckpointError: as `backup_before_edit`.
        """
        with path_lock(resolve_path(path, self.cwd)):
            with self._idle:
                self._idle.wait_for(lambda: not self._opening)
                self._writing += 1
            try:
                yield self.backup_before_edit(path)
            finally:
                with self._idle:
                    self._writing -= 1
                    self._idle.notify_all()

    def backup_before_edit(self, path: str) -> list[str]:
        """Backs up `path` before a tool changes it; returns notices for the UI.

        Raises:
            CheckpointError: no checkpoint is open, or the file could not be read.
        """
        key = resolve_path(path, self.cwd)
        with path_lock(key):  # no tool writes the file from the check to the append
            with self._lock:
                if self._require_current().backup_for(key, self.cwd) is not None:
                    return []
            notices: list[str] = []
            # read and stored outside the lock: in parallel
            item = take_item(path, key, self.cwd, self.store, self._disk, self._free_space, notices)
            if item is None:
                return notices
            with self._lock:
                record = self._require_current()  # a turn that opened meanwhile gets it: no write came between
                if record.backup_for(key, self.cwd) is not None:
                    return notices  # a `bash` call's change was recorded first, from its older baseline
                record.files.append(item)
                if self._shells:
                    self._raced[key] = item
                dropped = item.hash is not None and self.apply_retention()
                generation = self._commits.request()
            self._commit(generation)  # outside the lock: writers arriving meanwhile share the next write
            if dropped:
                with self._lock:
                    self._sweep(force=False)
            return notices

    def record_after_edit(self, path: str) -> None:
        """Records the digest of what the tool left at `path` (for outside-edit detection)."""
        key = resolve_path(path, self.cwd)
        with self._lock:
            record = self._current
            item = None if record is None else record.backup_for(key, self.cwd)
        if item is None or item.skipped in (SKIPPED_SYMLINK, SKIPPED_TOO_LARGE):
            return
        try:
            state = self.store.inspect_file(Path(key))
        except OSError:
            state = None
        regular, missing = state is not None and state.kind == "regular", state is not None and state.kind == "missing"
        # Not fsynced on its own: the after-digest only sharpens outside-edit detection, and
        # each durable write costs fsyncs on every edit. It reaches disk with the next backup or
        # checkpoint, with `flush()`, or when the process exits; a crash before that only makes
        # the check skip this file (never a false alarm, never a lost backup).
        with self._lock:
            item.after_known, item.after_hash = regular or missing, state.content_id if regular and state else None
            self._ledger.dirty = True

    def flush(self) -> None:
        """Writes after-digests recorded since the last write (call at the end of a turn for
        them to survive a crash; process exit does it too)."""
        with self._lock:
            self.wait_saved()
            if self._ledger.dirty:
                self._save()

    def apply_retention(self) -> bool:
        """Drops checkpoints older than 30 days, then the oldest ones while the session holds
        more than 200 backups (never the open one). Returns whether anything was dropped.
        Checkpoints the cap drops are never dropped silently: `take_notices()` names them."""
        with self._lock:
            return self._retain()

    def _retain(self) -> bool:
        kept, capped = retained(self.records, self._current, self._now())
        self._capped.extend(record.turn_number for record in capped)
        dropped = len(kept) != len(self.records)
        self.records = kept
        return dropped

    def take_notices(self) -> list[str]:
        """The notice (at most one) for checkpoints the 200-backup cap dropped since the last
        call, for the UI to show once per turn."""
        with self._lock:
            if not self._capped:
                return []
            notice = cap_notice(self._capped)
            self._capped = []
            return [notice]

    def _rule(self, *, defer: bool = False) -> Enforcement:
        """The backup rule (`blob_rule.py`) applied to the records about to be written: the whole
        file at this manager's first write, then the open checkpoint (where items are added).
        With `checkpoints.compatibleBackups` on, each item gets the real CLI's raw blob, `hash`
        its sha256 and our object in `blake3`; each real-CLI item is put in our store too."""
        if self._compatible is None:
            self._compatible = compatible.enabled(self.project)
        scope = self.records if not self._enforced else [self._current] if self._current is not None else []
        self._enforced = True
        return Enforcement(self.files.session_id, self.store, convert=self._compatible, defer=defer).apply(scope)

    def _require_current(self) -> Checkpoint:
        if self._current is None:
            raise CheckpointError("no checkpoint is open; call open_checkpoint at the start of the turn")
        return self._current

    def _save(self) -> None:
        """Makes the records durable as they are now (after a change)."""
        with self._lock:
            generation = self._commits.request()
        self._commit(generation)

    def _save_behind(self, worker: Worker, then: Callable[[], None] | None = None, *, changed: bool = True) -> None:
        """Writes the records (durably, as `_save`) on a thread while the turn goes on: after a
        `bash` call, the write and its fsyncs overlap the next model call instead of adding to
        the turn; `then` runs after it, once it succeeded (not `changed`: once what was asked
        before is durable). The bytes are taken now; `flush` (before the turn is reported) and
        `close` wait for it."""
        with self._lock:
            generation = self._commits.request() if changed else self._commits.requested
        self._commit(generation, worker, then)

    def _commit(self, generation: int, worker: Worker | None = None, then: Callable[[], None] | None = None) -> None:
        """Makes the file durable up to `generation` (group commit, `group_commit.py`): after a
        write in flight, finds it covered or writes all asked so far (on `worker`, if given).
        Raises OSError when the write failed (the records stay in memory, marked unsaved)."""
        while True:
            with self._lock:
                covered = self._commits.begin(generation)
                if covered != IN_FLIGHT:
                    try:
                        write = None if covered == DURABLE else self._snapshot()
                    except BaseException:
                        self._commits.end(None)  # never leave the others waiting for a write that never comes
                        raise
                    break
            self._commits.wait_idle()

        def finish() -> None:
            if write is not None:
                try:
                    write()
                except BaseException:
                    self._commits.end(None)
                    raise
                self._commits.end(covered)
            if then is not None:
                then()

        if worker is None:
            finish()
        else:
            self._saving = worker.submit(finish)  # waited for by flush, close and the exit handler

    def _snapshot(self) -> Callable[[], None]:
        """The write of the records as they are now (call under the lock): the backup rule's
        blobs first, then the file, whole and atomically."""
        if not self._registered:
            register_external_location(self.files.checkpoints, self.store.root)
            self._registered = True
        rule = self._rule(defer=True)  # items converted now, their blobs written with the file
        ledger, data = self._ledger, checkpoints_bytes(self.records)
        ledger.dirty = False

        def write() -> None:
            try:
                rule.write_blobs()
                write_checkpoints_data(ledger.path, data)
                ledger.stamp = stamp(ledger.path)
            except BaseException:
                ledger.dirty = True  # the turn's flush writes it again, and reports a failure
                raise

        return write

    def wait_saved(self) -> None:
        """Waits for a write `_save_behind` started."""
        with self._lock:
            saving, self._saving = self._saving, None
            if saving is not None:
                saving.wait()

    def _sweep(self, *, force: bool) -> None:
        moment = time.monotonic()
        if not force and moment - self._last_sweep < SWEEP_INTERVAL_SECONDS:
            return
        self._last_sweep = moment
        try:
            sweep_objects(self.store)
        except CheckpointError:
            pass  # some session's checkpoints cannot be read, so any object may be needed: keep all
