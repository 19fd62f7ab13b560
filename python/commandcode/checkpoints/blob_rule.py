"""The one backup rule both programs restore by (format §7.1): every backup, both ways.

1. With `checkpoints.compatibleBackups` on, every backup item of a record the real CLI can see
   (a line it parses: not hidden) is a sha256 item whose raw blob `file-history/<sid>/<sha256>`
   is there (the real CLI verifies every blob before it restores anything): a blake3 item (shell
   tracking, an import, a record of an older version) becomes one, `blake3` naming our object;
   a compatible item whose blob is gone (on every resume the real CLI deletes each blob no line
   it parses names: those of our hidden lines) gets it back from our store.
2. Every real-CLI backup (a sha256 item without `blake3`) a record names is also put in our
   store and the item mapped both ways (`blake3` added), so that hiding the record, and the
   real CLI's cleanup after it, never takes the only copy.

`Enforcement` applies both to records in place; every writer of records goes through it before
the records land: the checkpoint manager (edit tools, shell tracking, sub-agents), rewinds and
redos (which hide and un-hide records), imports, forks and a sweep's restore. Blobs are written
before the records that name them, so a kill in between leaves at most an unnamed blob.
Redo points are always hidden: they stay blake3 items of our store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..config.context import ProjectContext, for_settings_of
from ..config.paths import file_history_dir
from ..errors import BackupIntegrityError, CheckpointError
from ..storage.regular import read_regular
from . import compatible
from . import store as backups
from .records import Checkpoint, FileBackup, read_checkpoints, write_checkpoints

PENDING_BYTES = 64 << 20
"""A deferred enforcement writes its blobs at once past this many bytes held in memory."""


class Enforcement:
    """The rule for one session's records: `apply` mutates items (and writes or queues the blobs
    they need), `write_blobs` writes what was queued; `changed` says whether a record changed."""

    def __init__(self, session_id: str, store: backups.BackupStore, *, convert: bool, defer: bool = False,
                 blobs: compatible.BlobNames | None = None) -> None:
        self.session_id, self.store, self.convert, self.defer = session_id, store, convert, defer
        self.folder = file_history_dir(session_id)
        self._blobs = blobs if blobs is not None else compatible.BlobNames(self.folder)
        self.changed = False
        self._queued: list[bytes] = []
        self._queued_bytes = 0

    def apply(self, records: Iterable[Checkpoint]) -> Enforcement:
        for record in records:
            visible = not record.hidden
            for item in record.files:
                if item.problem is None and item.skipped is None and item.hash is not None:
                    self._item(item, visible=visible)
        return self

    def write_blobs(self) -> None:
        """Writes the queued blobs (a blob that cannot be written is left to our store: only the
        real CLI cannot restore that item)."""
        queued, self._queued, self._queued_bytes = self._queued, [], 0
        for data in queued:
            try:
                self._blobs.add(compatible.write_raw_blob(self.session_id, data))
            except OSError:
                continue

    def _item(self, item: FileBackup, *, visible: bool) -> None:
        assert item.hash is not None
        if item.algorithm == backups.BLAKE3:
            if visible and self.convert:
                self._convert(item, item.hash)
            return
        twin = item.store_object
        if twin is None:
            self._adopt(item, item.hash)
        elif visible and not self._blobs.has(item.hash):
            self._recreate(item.hash, twin)

    def _convert(self, item: FileBackup, object_id: str) -> None:
        """A blake3 item of a visible record as a compatible one, its blob queued or written."""
        data = self._object(object_id)
        if data is None:
            return  # our store still holds what it can: only the real CLI cannot restore this one
        item.hash, item.algorithm = hashlib.sha256(data).hexdigest(), backups.SHA256
        item.extra[compatible.BLAKE3_KEY] = object_id
        self.changed = True
        self._blob(data)

    def _adopt(self, item: FileBackup, digest: str) -> None:
        """A real-CLI backup put in our store and mapped both ways (its blob verified first)."""
        try:
            data = read_regular(self.folder / digest, limit=backups.MAX_BACKUP_SIZE)
        except OSError:
            return
        if hashlib.sha256(data).hexdigest() != digest.lower():
            return  # gone or damaged: nothing of ours can stand in for it
        try:
            item.extra[compatible.BLAKE3_KEY] = self.store.put_bytes(data)
        except OSError:
            return
        self.changed = True

    def _recreate(self, digest: str, object_id: str) -> None:
        data = self._object(object_id)
        if data is not None and hashlib.sha256(data).hexdigest() == digest.lower():
            self._blob(data)

    def _object(self, object_id: str) -> bytes | None:
        try:
            return self.store.read(object_id)
        except (OSError, BackupIntegrityError, CheckpointError):
            return None  # a missing or damaged object: the restore that needs it says which file

    def _blob(self, data: bytes) -> None:
        self._queued.append(data)
        self._queued_bytes += len(data)
        if not self.defer or self._queued_bytes > PENDING_BYTES:
            self.write_blobs()


def enforce(session_id: str, records: Sequence[Checkpoint], store: backups.BackupStore, *, cwd: Path | None,
            project: ProjectContext | None = None, blobs: compatible.BlobNames | None = None) -> bool:
    """Applies the rule to `records` in place, blobs written at once; returns whether a record
    changed (the caller writes them). `cwd` is the session's folder, whose settings say whether
    compatible backups are on (None: blake3 items are left as they are); they are `project`'s
    when that is the caller's context for that folder (`for_settings_of`), else its own.
    `blobs` (of the session's blob folder) is asked and told of the blobs written, so a caller
    that asks it next (a rewind's plan) lists the folder once."""
    enforcement = Enforcement(session_id, store,
                              convert=cwd is not None and compatible.enabled(for_settings_of(cwd, project)), blobs=blobs)
    enforcement.apply(records)
    enforcement.write_blobs()
    return enforcement.changed


def enforce_file(checkpoints: Path, session_id: str, *, cwd: Path | None,
                 store: backups.BackupStore | None = None, rewrite: bool = True,
                 project: ProjectContext | None = None) -> bool:
    """`enforce` over a session's checkpoints file, rewritten (atomically) when a record changed
    and `rewrite` allows it (a sweep's restore brings a session back byte for byte: it only makes
    the blobs again, and the manager's first write of the session does the rest); a file that
    cannot be read is left as it is. Returns whether it was rewritten."""
    try:
        records = read_checkpoints(checkpoints)
    except (CheckpointError, OSError):
        return False
    changed = bool(records) and enforce(session_id, records, store if store is not None else backups.BackupStore(), cwd=cwd,
                                          project=project)
    if not changed or not rewrite:
        return False
    write_checkpoints(checkpoints, records)
    return True
