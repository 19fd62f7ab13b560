"""Facade over the native backup store: the only Python module that imports it.

Our backups are objects in one content-addressed store shared by every session
(`paths.objects_dir()`, `<data dir>/objects/ab/cdef…`): named by the blake3 of the original
bytes, zstd-compressed, written atomically and never modified. The real CLI's backups are raw
sha256 blobs in `file-history/<session id>/`; both can be restored. Restores run in Rust:
verified before anything is written, applied all or nothing, journaled so a crash is finished
or undone by the next open (`recover_pending`). A restore returns once every file holds its new
bytes; its settle (the flush and the journal's removal) runs on a native thread behind the caller:
a later write of its files in this process waits for it first, and so does the exit
(`settling.py`).

Paths become `str` here and nowhere deeper; callers pass and get `pathlib.Path`, but for the
targets of a restore, which may all be `str` (a rewind's thousands: a `Path` each cost it more
than the rest of its planning), and then come back as `str`.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple, cast

from .. import _native
from ..config.paths import data_dir, objects_dir
from ..errors import RestoreError
from ..storage.signals import before_delivery
from . import settling

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..sessions.files import SessionFiles

MAX_BACKUP_SIZE: int = _native.MAX_BACKUP_SIZE
"""Files over 10 MB (10,485,760 bytes) are never read: recorded `skipped: "too_large"`."""

KEEP_LEVEL: int | None = None
"""zstd level of the objects a redo point stores (`PreparedRestore.keep`); `None`: stored frames,
not compressed (format §7.2). Both sit on a clock the user waits on: the rewind compressed a
thousand files at level 1, and the redo decompressed them (a quarter of its CPU); stored, neither
does, and a collection compresses them when it absorbs the pack."""

GC_LOCK_NAME = "gc.lock"
"""Taken shared by every put, exclusively by the garbage collection's sweep (`gc.py`)."""

StatTable = _native.StatTable
"""Cached stat keys of a project's files; `scan` reports only what changed (shell tracking)."""

BLAKE3 = "blake3"
SHA256 = "sha256"

FileKind = Literal["regular", "missing", "symlink", "not_regular", "too_large"]
Action = Literal["write", "delete", "unchanged"]
Algorithm = Literal["blake3", "sha256"]
TreeKind = Literal["file", "symlink", "fifo", "socket", "folder"]


class FileSnapshot(NamedTuple):
    """What is at a path: its kind, and for a regular file its blake3, size and mode bits.

    This and the other records a restore makes by the thousand (`RestoreTarget`,
    `PlannedChange`) are named tuples: immutable like a frozen dataclass, at a third of its cost
    to make (a frozen dataclass sets each field through `object.__setattr__`)."""

    kind: FileKind
    content_id: str | None
    size: int | None
    mode: int | None
    stored_now: bool = False


def _snapshot(state: _native.FileState) -> FileSnapshot:
    return FileSnapshot(state.kind, state.content_id, state.size, state.mode, state.stored_now)


class RestoreTarget(NamedTuple):
    """One file to put back.

    Attributes:
        path: Absolute target path: a `Path`, or `str` (when every target of a restore is a
            `str`, its `PlannedChange`s name them by `str`).
        digest: The backup's digest, or `None` when the file must not exist (it is deleted).
        algorithm: `"blake3"` (our store) or `"sha256"` (a real-CLI blob in `blob_folder`).
        blob_folder: The real CLI's `file-history/<session id>` folder, for sha256 backups.
        blake3: For a sha256 backup, the blake3 its record also names it by (a compatible
            backup's twin): a blob that hashes to it needs no sha256 pass (checked otherwise).
        mode: Permission bits to restore; `None` keeps the current file's (else 0644).
        expected: The last state our tools left: `None` (unknown, not checked), `"absent"`, a
            blake3 digest, or `"symlink"` (to `expected_link`), `"fifo"`, `"socket"`, `"folder"` (what a shell
            command left). A differing file counts as changed outside the tracked tools.
        kind: `"file"`, or the symlink (to `link`), FIFO, socket or empty folder to put back (`digest`
            is then `None`; never followed, never written through).
    """

    path: Path | str
    digest: str | None
    algorithm: str = BLAKE3
    blob_folder: Path | None = None
    mode: int | None = None
    expected: str | None = None
    kind: TreeKind = "file"
    blake3: str | None = None
    link: str | None = None
    expected_link: str | None = None

    def _native_item(self) -> _native.RestoreItem:
        return _native.RestoreItem(
            os.fspath(self.path),
            digest=self.digest,
            algorithm=cast(Algorithm, self.algorithm),
            blob_folder=None if self.blob_folder is None else os.fspath(self.blob_folder),
            blake3=self.blake3,
            mode=self.mode,
            expected=self.expected,
            kind=self.kind,
            link=self.link,
            expected_link=self.expected_link,
        )


class PlannedChange(NamedTuple):
    """What a restore does to one target; `content_id` is the blake3 it ends up with. `path` is
    the target's own (`RestoreTarget.path`: a `Path` or a `str`)."""

    path: Path | str
    action: Action
    changed_outside: bool
    content_id: str | None


@dataclass(frozen=True)
class Problem:
    """Why one target cannot be restored; `code` is e.g. `outside`, `symlink`, `object_missing`."""

    path: Path
    code: str
    message: str


@dataclass(frozen=True)
class RestoreOutcome:
    """The changes a restore made (or, from `check_restore`, would make) and what stops it."""

    changes: list[PlannedChange]
    problems: list[Problem]


def _outcome(plan: _native.RestorePlan, targets: Sequence[RestoreTarget]) -> RestoreOutcome:
    # The native module hands back `str` targets (normalised): changes keep them when the caller
    # named its targets by `str`, else each gets the caller's own `Path` object (a new one for a
    # target the normalisation changed). Problems name a `Path`.
    known: dict[str, Path] = {}
    for target in targets:
        if not isinstance(path := target.path, str):
            known[os.fspath(path)] = path
    entries = plan.entries
    changes = [PlannedChange(known.get(target) or Path(target), action, changed, content)
               for target, action, changed, content in entries] if known else \
        [PlannedChange(target, action, changed, content) for target, action, changed, content in entries]
    problems = [Problem(known.get(target) or Path(target), code, message) for target, code, message in plan.problems]
    return RestoreOutcome(changes, problems)


class BackupStore:
    """The shared object store. Cheap to create; holds one lock file open once it has stored something."""

    def __init__(self, root: Path | None = None) -> None:
        self._native = _native.ObjectStore(os.fspath(root if root is not None else objects_dir()))
        self._gc_lock: int | None = None
        self._holders = 0  # puts in flight (on any thread) holding `gc.lock` shared
        self._holders_lock = threading.Lock()

    def __del__(self) -> None:
        if getattr(self, "_gc_lock", None) is not None:
            os.close(self._gc_lock)  # type: ignore[arg-type]

    @contextmanager
    def _putting(self) -> Iterator[None]:
        """Holds `gc.lock` shared while an object is written or its mtime refreshed, so a garbage
        collection never unlinks an object between judging it old and this put. Puts on several
        threads share one hold (a flock belongs to the open file, so the first put takes it and
        the last one to finish releases it)."""
        with self._holders_lock:
            if self._gc_lock is None:
                try:
                    self._gc_lock = os.open(os.path.join(self._native.root, GC_LOCK_NAME),
                                            os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
                except OSError:  # no lock file to be had: no collection can take it either, so none runs
                    pass
            descriptor = self._gc_lock
            if descriptor is not None and self._holders == 0:
                fcntl.flock(descriptor, fcntl.LOCK_SH)
            self._holders += 1
        try:
            yield
        finally:
            with self._holders_lock:
                self._holders -= 1
                if descriptor is not None and self._holders == 0:
                    fcntl.flock(descriptor, fcntl.LOCK_UN)

    @property
    def root(self) -> Path:
        return Path(self._native.root)

    def backup_file(self, path: Path, *, max_size: int = MAX_BACKUP_SIZE) -> FileSnapshot:
        """Stores the bytes of `path` (never through a symlink; nothing over `max_size` is read).

        Returns the snapshot; `kind` says when nothing was stored (missing, symlink, too large).

        Raises:
            OSError: the file or the store could not be read or written (`ENOSPC` included).
        """
        with self._putting():
            return _snapshot(self._native.backup_file(os.fspath(path), max_size))

    def inspect_file(self, path: Path, *, max_size: int = MAX_BACKUP_SIZE) -> FileSnapshot:
        """The state of `path` and the blake3 of its bytes; stores nothing."""
        return _snapshot(self._native.inspect_file(os.fspath(path), max_size))

    def inspect_files(self, paths: list[str], *, max_size: int = MAX_BACKUP_SIZE) -> list[tuple[str, int] | None]:
        """`(blake3, mode)` of each path that is a regular file (None for the others), read in
        parallel without the GIL; stores nothing."""
        return self._native.inspect_files(paths, max_size)

    def put_bytes(self, data: bytes) -> str:
        """Stores `data`; returns its content id."""
        with self._putting():
            content_id, _ = self._native.put_bytes(data)
        return content_id

    def read(self, content_id: str) -> bytes:
        """The verified original bytes of an object.

        Raises:
            BackupIntegrityError: the object is missing, does not decompress or hash to its name.
        """
        return self._native.read(content_id)

    def verify(self, content_id: str) -> None:
        """Raises `BackupIntegrityError` unless the object is intact."""
        self._native.verify(content_id)

    def contains(self, content_id: str) -> bool:
        return self._native.contains(content_id)

    def object_path(self, content_id: str) -> Path:
        return Path(self._native.object_path(content_id))

    def sweep(self, referenced: Iterable[str], *, grace_seconds: float) -> dict[str, int]:
        """Deletes objects not in `referenced` and older than the grace period."""
        return dict(self._native.sweep(sorted(set(referenced)), grace_seconds))

    def absorb_packs(self, *, pause_ms: int = 0) -> dict[str, int]:
        """Makes the objects of every pack (a redo point's, format §7.2) loose objects, then deletes
        the packs, so that everything reading objects by path finds them; returns
        `{packs, objects, removed_temporaries}`. `pause_ms` is a crash-test hook.

        Raises:
            OSError: an object or a pack could not be written or deleted (every object stays
                readable: a pack goes only once its objects are loose and durable).
        """
        with self._putting():
            return dict(self._native.absorb_packs(pause_ms))

    def packed_ids(self) -> list[str]:
        """The ids of the objects the packs hold."""
        return self._native.packed_ids()

    def packed_sizes(self) -> dict[str, int]:
        """By id, the bytes each object of the packs takes there (its frame)."""
        return dict(self._native.packed_sizes())

    def usage(self) -> tuple[int, int]:
        """`(objects, bytes on disk)`: loose objects, and packed ones no collection absorbed yet."""
        return self._native.usage()


def free_space(path: Path) -> int | None:
    """Bytes free on the file system holding `path`, or `None` when it cannot be asked."""
    return _native.free_space(os.fspath(path))


def content_id(data: bytes) -> str:
    """The blake3 content id of `data`."""
    return _native.content_id(data)


def scan_tree_items(root: Path, excluded: Sequence[Path]) -> list[tuple[str, str, str | None, int]]:
    """`(path, kind, link, mode)` of the symlinks, FIFOs, sockets, device nodes (`"device"`) and
    hollow folders under `root`."""
    return [(os.fspath(path), kind, None if link is None else os.fspath(link), mode)
            for path, kind, link, mode in _native.scan_tree_items(root, list(excluded))]


def names_like(folders: Sequence[str], prefix: str, suffix: str) -> list[tuple[int, str]]:
    """`(index in folders, name)` of every entry of each folder whose name starts with `prefix`
    and ends with `suffix`, read natively in one call with the GIL released (no `stat` of any
    entry; a folder that cannot be read gives nothing): where a killed write's temps may lie
    (`leftovers.py`).

    Raises:
        ValueError: a folder name the file system cannot encode.
    """
    return _native.names_like(folders, prefix, suffix)


def journal_path(session_id: str) -> Path:
    """The restore journal of a session: `<data dir>/journals/<session id>.json`."""
    return data_dir() / "journals" / f"{session_id}.json"


def check_restore(store: BackupStore, targets: Sequence[RestoreTarget], *, confine_to: Path | None) -> RestoreOutcome:
    """Verifies a restore without writing anything (the dry run)."""
    items = [target._native_item() for target in targets]
    confine = None if confine_to is None else os.fspath(confine_to)
    return _outcome(_native.check_restore(store._native, items, confine_to=confine, protected=_protected()), targets)


def _protected() -> list[str]:
    """Folders no restore may write in: commandcode's own data dir (its transcripts, objects
    and journals), even when it lies inside the project (cwd = $HOME)."""
    return [os.fspath(data_dir().absolute())]


def restore_files(
    store: BackupStore,
    targets: Sequence[RestoreTarget],
    *,
    session_id: str,
    confine_to: Path | None,
    force: bool = False,
    companion: tuple[Path, bytes] | None = None,
    in_place: bool = True,
    fail_before_step: int | None = None,
    step_delay_ms: int = 0,
) -> RestoreOutcome:
    """Verifies, then restores every target, all or nothing.

    `companion` is `(path, bytes)` of a file of ours replaced in the same all-or-nothing,
    journaled step (the checkpoints file with the restored state's after-digests): a crash
    leaves both old or both new.

    `in_place` (the default) overwrites an existing single-link, non-executable file in place; `False` replaces
    every target by a new file (each changes atomically for concurrent readers, at several
    times the cost on disks that trim freed blocks).

    `fail_before_step` and `step_delay_ms` are test hooks for the rollback and crash tests.

    Unlike `PreparedRestore.commit`, it returns once the restore has settled (flushed to disk, its
    journal removed).

    Raises:
        BackupIntegrityError: a backup is missing or corrupt (nothing written; `.problems`).
        ChangedOutsideError: targets changed outside the tracked tools and `force` is off.
        RestoreError: another refusal (outside path, symlink, not writable) or a failure midway,
            after which every file already written was put back.
    """
    with prepare_restore(store, targets, session_id=session_id, confine_to=confine_to, in_place=in_place) as prepared:
        outcome = prepared.commit(force=force, companion=companion, fail_before_step=fail_before_step,
                                  step_delay_ms=step_delay_ms)
    journal = journal_path(session_id)
    reason = settling.settle(journal)
    if reason is not None:
        raise RestoreError(f"every file was restored but could not be flushed to disk ({reason}); the journal "
                           f"{journal} is kept for the next open to finish")
    return outcome


class PreparedRestore:
    """A restore verified once (`prepare_restore`): its `outcome` says what it would do; `keep`
    stores what it replaces (for a redo point); `commit` carries it out. It holds the session's
    restore lock until committed or closed (use it as a context manager)."""

    def __init__(self, store: BackupStore, native: _native.PreparedRestore, targets: Sequence[RestoreTarget],
                 journal: Path) -> None:
        self._store, self._native, self._targets, self._journal = store, native, targets, journal
        self.outcome = _outcome(native.plan, targets)

    def __enter__(self) -> PreparedRestore:
        return self

    def __exit__(self, *_: object) -> None:
        self._native.close()

    def keep(self, *, max_size: int = MAX_BACKUP_SIZE, pause_ms: int = 0) -> dict[str, FileSnapshot | None]:
        """By target (`str`), what each target the restore changes holds now, its bytes stored
        (durably, all new objects by one flush) from what verification read and hashed: no
        second read or hash. `None`: not kept (a symlink, FIFO, folder or a file over
        `max_size`: the caller looks at it). `pause_ms` is a crash-test hook.

        Raises:
            OSError: the store could not be written, or a file changed since it was verified.
        """
        with self._store._putting():
            rows = self._native.keep(self._store._native, max_size, level=KEEP_LEVEL, pause_ms=pause_ms)
        return {target: None if kind == "other" else FileSnapshot(kind, content, size, mode, stored_now)
                for target, kind, content, mode, size, stored_now in rows}

    def commit(self, *, force: bool = False, companion: tuple[Path, bytes] | None = None,
               fail_before_step: int | None = None, step_delay_ms: int = 0) -> RestoreOutcome:
        """Restores every target, all or nothing, as `restore_files` does (same errors); returns
        `outcome` (the plan verification made is the plan carried out) once every target holds its
        new bytes: the settle (the flush, the journal's removal) runs on a native thread behind
        the caller. Until it is done, a write of the companion (a rewind's last write of the
        checkpoints file) or of the project (the agent's tools) in this process waits for it, and
        so does the exit (`settling.py` says why). A failed settle leaves the journal for the next
        open to complete; it is an error for the next recovery or restore of the session and for
        writes of the companion while that journal is open, and a warning at exit if none came
        (`settle_and_warn`)."""
        from ..config.testing_hooks import settle_pause_ms  # COMMANDCODE_TEST_SETTLE_PAUSE_MS: 0 but in tests

        _wait_at_exit()
        self._native.commit(
            self._store._native, companion=None if companion is None else (os.fspath(companion[0]), companion[1]),
            force=force, fail_before_step=fail_before_step, step_delay_ms=step_delay_ms,
            settle_pause_ms=settle_pause_ms())
        settling.started(self._journal, None if companion is None else companion[0])
        return self.outcome


def settle_restores() -> list[tuple[Path, str]]:
    """Waits until every restore this process committed has settled: its new bytes flushed to
    disk and its journal removed (tens of ms after the commit returned). Returns `(journal,
    reason)` of each settle that failed and was not reported yet: its journal stays, and the next
    open of the session completes the restore from it."""
    return settling.settle_all()


def native_settle(journal: str | None) -> list[tuple[str, str]]:
    """The native wait for the settle of `journal` (`None`: of every restore of this process);
    `(journal, reason)` of each failure not returned before (`settling.py` keeps the books)."""
    return [(os.fspath(failed), reason) for failed, reason in _native.settle_restores(journal)]


_exit_wait = threading.Lock()
_exit_registered = False


def _wait_at_exit() -> None:
    """Registers, once, the exit handler that waits for the restores still settling (the CLI runs
    the handlers before its `os._exit`), and the same wait before a signal held while a rewind
    committed is delivered (a SIGTERM's default action ends the process without exit handlers).
    A process that exits without them (a kill, `os._exit`) leaves the journal, which the next
    open completes."""
    global _exit_registered
    with _exit_wait:
        if not _exit_registered:
            _exit_registered = True
            atexit.register(settle_and_warn)
            before_delivery(settle_and_warn)


def settle_and_warn() -> None:
    """`settle_restores`, with one `warning:` line on stderr for each settle that failed (the exit
    handler the first commit registers)."""
    for journal, reason in settle_restores():
        sys.stderr.write(f"warning: a restore could not be flushed to disk ({reason}); the next open of the "
                         f"session finishes it from `{journal}`\n")


def prepare_restore(store: BackupStore, targets: Sequence[RestoreTarget], *, session_id: str,
                    confine_to: Path | None, in_place: bool = True) -> PreparedRestore:
    """Takes the session's restore lock, finishes a restore a crash interrupted, and verifies
    `targets` once (every object decompressed and hashed, every target read and hashed);
    nothing is written.

    Raises:
        RestoreError: another process is restoring this session right now, or this process's
            last restore of the session could not be flushed to disk (said once: the next attempt
            finishes that restore first).
    """
    journal = journal_path(session_id)
    _settle_before_restoring(journal)
    items = [target._native_item() for target in targets]
    native = _native.prepare_restore(
        store._native, items, os.fspath(journal),
        confine_to=None if confine_to is None else os.fspath(confine_to), protected=_protected(), in_place=in_place)
    return PreparedRestore(store, native, targets, journal)


def _settle_before_restoring(journal: Path) -> None:
    """Waits for this process's settle of `journal`'s last restore, if still running.

    Raises:
        RestoreError: that settle failed (said once: the next attempt finishes the restore from
            its journal).
    """
    reason = settling.settle(journal)
    if reason is not None:
        raise RestoreError(f"the last restore of this session could not be flushed to disk ({reason}); its journal "
                           f"{journal} is kept", hint="run the command again: it finishes that restore first")


def recover_pending(
    files: SessionFiles, root: Path | None, *, store: BackupStore | None = None
) -> tuple[str, list[Path]] | None:
    """Finishes or undoes a restore of this session that a crash interrupted.

    The journal is checked first, in Rust, against the confinement the restore had: every
    target inside `root` (the session's working directory; `None` only for a rewind the user let
    outside it with `--allow-outside`), none in the data dir but the session's checkpoints file,
    sources only from `store` (default: the shared one), the session's real-CLI blob folder or
    the journal's companion copy, the trash only the journal's own. A journal that fails is kept
    as it is and nothing is touched.

    Returns `None` when there was none, else `("rolled_back" | "completed", targets)`.

    Raises:
        RestoreError: another process is restoring this session right now, or the journal is
            unreadable or names a path outside those bounds (it is left in place), or this
            process's last restore of the session could not be flushed to disk (said once).
    """
    journal = journal_path(files.session_id)
    _settle_before_restoring(journal)
    if not journal.exists():
        return None
    outcome = _native.recover_restore(
        os.fspath(journal),
        root=None if root is None else os.fspath(Path(root).absolute()),
        protected=list[str | os.PathLike[str]](_protected()),
        store=os.fspath(store.root if store is not None else objects_dir()),
        blob_folder=os.fspath(files.file_history),
        companion=os.fspath(files.checkpoints.absolute()),
    )
    if outcome is None:
        return None
    state, targets = outcome
    return state, [Path(target) for target in targets]
