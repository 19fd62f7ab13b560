"""`<session id>.checkpoints.jsonl` and the `CheckpointManager` that writes it (format §4).

Every non-meta user prompt opens a checkpoint; before `write_file`/`edit_file` change a file,
its bytes are backed up (only the first backup of a path within one checkpoint counts); after
the tool ran, the digest of what it wrote is recorded, so a later rewind can tell edits made
outside the tracked tools (bash, an editor) from our own.

Records are the real CLI's (`id`/`messageId`, `turnNumber`, `createdAt`, `prompt`,
`messageCount`, `lastMessageId`, `files[{path, hash, skipped?}]`) and the file is rewritten
whole, atomically: lines joined with `\\n`, no trailing newline. Our `files` items add keys the
real CLI ignores:

- `algo: "blake3"` — `hash` names an object of our shared store (absent: the real CLI's sha256
  raw blob in `file-history/`), so the two are never confused;
- `mode` — the permission bits to restore;
- `afterHash` — blake3 of what our tool left (`null`: it left no file; absent: unknown). It is
  written with the next durable write, by `flush()`, or when the manager goes away, not fsynced
  on its own: it only sharpens outside-edit detection, and a lost one never loses a backup.

A symlink is never followed: it is recorded `skipped: "symlink"` and a notice names it.
Caps: files over 10 MB are `skipped: "too_large"`; at most 200 backups per session (the oldest
checkpoints age out first); checkpoints older than 30 days age out; objects are deleted only
when no session's checkpoints reference them, after a grace period. When free space is under
twice a file's size, checkpointing pauses for the session (`skipped: "disk_full"`) until twice
100 MiB is free again.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from . import store as backups
from ..errors import CheckpointError
from ..storage.durable import atomic_write, ensure_dir
from ..storage.ids import iso_now, new_uuid, parse_iso
from ..storage.jsonfmt import dumps_line
from ..config.paths import SessionFiles, objects_dir, projects_dir

PROMPT_PREVIEW_CHARS = 120
RETENTION_DAYS = 30
MAX_BACKUPS_PER_SESSION = 200
RESUME_FREE_BYTES = 2 * 104_857_600
SWEEP_GRACE_SECONDS = 3600.0
SWEEP_INTERVAL_SECONDS = 600.0

SKIPPED_TOO_LARGE = "too_large"
SKIPPED_DISK_FULL = "disk_full"
SKIPPED_SYMLINK = "symlink"

FreeSpace = Callable[[Path], "int | None"]


_HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}")
_MAX_MODE = 2**32 - 1
_ALGORITHMS = frozenset({backups.BLAKE3, backups.SHA256})


def _digest_problem(field_name: str, value: Any) -> str | None:
    """Why `value` is not a digest field (`None`: it is one, or null)."""
    if value is None or (isinstance(value, str) and _HEX_DIGEST.fullmatch(value)):
        return None
    return f"`{field_name}` {_shown(value)} is not a 64-digit hex digest"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


def _item_problem(value: dict[str, Any]) -> str | None:
    """Why a `files` item cannot be used as it is: a field a restore would act on is malformed.
    Such an item is never restored (a rewind that needs it is refused, naming the file)."""
    path = value["path"]
    try:
        path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return "`path` holds a lone surrogate escape that names no file"
    if "\x00" in path:
        return "`path` holds a NUL character"
    if "hash" in value and value["hash"] is not None and not isinstance(value["hash"], str):
        return f"`hash` {_shown(value['hash'])} is not a string"
    problem = _digest_problem("hash", value.get("hash"))
    if problem is None and "afterHash" in value:
        problem = _digest_problem("afterHash", value["afterHash"])
    if problem is not None:
        return problem
    algorithm = value.get("algo", backups.SHA256)
    if algorithm not in _ALGORITHMS:
        return f"`algo` {_shown(algorithm)} is not blake3 or sha256"
    mode = value.get("mode")
    if mode is not None and (not isinstance(mode, int) or isinstance(mode, bool) or not 0 <= mode <= _MAX_MODE):
        return f"`mode` {_shown(mode)} is not a permission number"
    return None


@dataclass
class FileBackup:
    """One `files` item: the state of `path` before the first edit of it in a checkpoint.

    `problem` says why an item read from disk is malformed (a bad digest, mode, algorithm or
    path); such an item is unrestorable and is written back exactly as it was read (`raw`).
    """

    path: str
    hash: str | None
    skipped: str | None = None
    algorithm: str = backups.SHA256
    mode: int | None = None
    after_known: bool = False
    after_hash: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None
    raw: dict[str, Any] | None = None

    _KNOWN = frozenset({"path", "hash", "skipped", "algo", "mode", "afterHash"})

    @classmethod
    def from_json(cls, value: Any) -> FileBackup | None:
        """Parses an item; `None` when it has no string `path`."""
        if not isinstance(value, dict) or not isinstance(value.get("path"), str):
            return None
        problem = _item_problem(value)
        skipped = value.get("skipped")
        if problem is not None:
            return cls(path=value["path"], hash=None, skipped=skipped if isinstance(skipped, str) else None,
                       problem=problem, raw=value)
        return cls(
            path=value["path"],
            hash=value.get("hash"),
            skipped=skipped if isinstance(skipped, str) else None,
            algorithm=value.get("algo", backups.SHA256),
            mode=value.get("mode"),
            after_known="afterHash" in value,
            after_hash=value.get("afterHash"),
            extra={key: item for key, item in value.items() if key not in cls._KNOWN},
        )

    def to_json(self) -> dict[str, Any]:
        if self.raw is not None:
            return dict(self.raw)
        out: dict[str, Any] = {"path": self.path, "hash": self.hash}
        if self.skipped is not None:
            out["skipped"] = self.skipped
        if self.algorithm != backups.SHA256:
            out["algo"] = self.algorithm
        if self.mode is not None:
            out["mode"] = self.mode
        if self.after_known:
            out["afterHash"] = self.after_hash
        out.update(self.extra)
        return out

    @property
    def restorable(self) -> bool:
        """Whether a rewind can put this state back (it was backed up, or did not exist)."""
        return self.skipped is None and self.problem is None


@dataclass
class Checkpoint:
    """One record: the state before one user prompt's turn."""

    id: str
    message_id: str
    turn_number: int
    created_at: str
    prompt: str | None
    message_count: int
    last_message_id: str | None
    files: list[FileBackup] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    _KNOWN = frozenset(
        {"id", "messageId", "turnNumber", "createdAt", "prompt", "messageCount", "lastMessageId", "files", "messages"}
    )

    @classmethod
    def from_json(cls, value: Any, position: int) -> Checkpoint | None:
        """Parses a record (legacy `messages` arrays are converted); `None` when unusable."""
        if not isinstance(value, dict) or not isinstance(value.get("id"), str):
            return None
        message_count = value.get("messageCount")
        last_message_id = value.get("lastMessageId")
        legacy_messages = value.get("messages")
        if not isinstance(message_count, int) and isinstance(legacy_messages, list):
            message_count = len(legacy_messages)
            if legacy_messages and last_message_id is None:
                meta = legacy_messages[-1].get("meta") if isinstance(legacy_messages[-1], dict) else None
                last_message_id = meta.get("messageId") if isinstance(meta, dict) else None
        turn_number = value.get("turnNumber")
        files = value.get("files")
        prompt = value.get("prompt")
        created_at = value.get("createdAt")
        message_id = value.get("messageId")
        return cls(
            id=value["id"],
            message_id=message_id if isinstance(message_id, str) else value["id"],
            turn_number=turn_number if isinstance(turn_number, int) and not isinstance(turn_number, bool) else position + 1,
            created_at=created_at if isinstance(created_at, str) else "",
            prompt=prompt if isinstance(prompt, str) else None,
            message_count=message_count if isinstance(message_count, int) else 0,
            last_message_id=last_message_id if isinstance(last_message_id, str) else None,
            files=[item for item in map(FileBackup.from_json, files if isinstance(files, list) else []) if item],
            extra={key: item for key, item in value.items() if key not in cls._KNOWN},
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "messageId": self.message_id,
            "turnNumber": self.turn_number,
            "createdAt": self.created_at,
        }
        if self.prompt is not None:
            out["prompt"] = self.prompt
        out["messageCount"] = self.message_count
        if self.last_message_id is not None:
            out["lastMessageId"] = self.last_message_id
        out["files"] = [item.to_json() for item in self.files]
        out.update(self.extra)
        return out

    def backup_for(self, key: str, cwd: Path) -> FileBackup | None:
        """The item of this checkpoint for a resolved path, if any (the first one counts)."""
        for item in self.files:
            if resolve_path(item.path, cwd) == key:
                return item
        return None

    @property
    def backup_count(self) -> int:
        return sum(1 for item in self.files if item.hash is not None)


def prompt_preview(prompt: str) -> str | None:
    """The first non-blank line, trimmed, cut to 120 characters; `None` when there is none."""
    for line in prompt.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped[:PROMPT_PREVIEW_CHARS]
    return None


def resolve_path(path: str, cwd: Path) -> str:
    """A tool's `file_path` as an absolute, lexically normalised path (relative to `cwd`)."""
    return os.path.normpath(os.path.join(os.fspath(cwd), path))


def read_checkpoints(path: Path) -> list[Checkpoint]:
    """The records of a checkpoints file; unparseable lines (invalid JSON, or nested deeper than
    the parser can follow) are skipped, a missing file is `[]`.

    Raises:
        CheckpointError: `path` is a FIFO, folder or device (opening it never blocks).
    """
    text = _read_regular(path)
    if text is None:
        return []
    records: list[Checkpoint] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        record = Checkpoint.from_json(value, len(records))
        if record is not None:
            records.append(record)
    return records


def _read_regular(path: Path) -> str | None:
    """The text of the regular file at `path` (`None`: missing). Opened with `O_NONBLOCK` and
    checked with `fstat`, so a FIFO in its place is refused instead of blocking forever. A
    symlink is read through (our writes replace the link itself, never what it points to)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise CheckpointError(f"cannot read {path}: {error.strerror or error}") from None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise CheckpointError(f"{path} is not a regular file; its checkpoints cannot be read")
        return handle.read().decode("utf-8", errors="replace")


def checkpoints_bytes(records: list[Checkpoint]) -> bytes:
    """The file's content for `records`: lines joined with `\\n`, no trailing newline."""
    return "\n".join(dumps_line(record.to_json()) for record in records).encode("utf-8")


def write_checkpoints(path: Path, records: list[Checkpoint]) -> None:
    """Rewrites the file whole and atomically."""
    ensure_dir(path.parent)
    atomic_write(path, checkpoints_bytes(records))


EXTERNAL_LOCATIONS_NAME = "external-checkpoints.txt"


def iter_checkpoint_files(root: Path | None = None, store_root: Path | None = None) -> Iterator[Path]:
    """Every `*.checkpoints.jsonl` under the projects folder, plus the checkpoints files kept
    elsewhere (a session resumed in place outside the projects folder) that the store lists."""
    base = root if root is not None else projects_dir()
    if base.is_dir():
        for project in sorted(base.iterdir()):
            if project.is_dir() and not project.is_symlink():
                yield from sorted(project.glob("*.checkpoints.jsonl"))
    for line in _external_locations(store_root):
        path = Path(line)
        if path.is_file():
            yield path


def _external_locations(store_root: Path | None) -> list[str]:
    listing = (store_root if store_root is not None else objects_dir()) / EXTERNAL_LOCATIONS_NAME
    try:
        return [line for line in listing.read_text(encoding="utf-8").split("\n") if line]
    except FileNotFoundError:
        return []


def register_external_location(path: Path, store_root: Path) -> None:
    """Lists a checkpoints file that lives outside the projects folder, so sweeps keep its
    objects (a sweep only sees what it can find)."""
    location = os.path.abspath(path)
    if os.path.commonpath([location, os.path.abspath(projects_dir())]) == os.path.abspath(projects_dir()):
        return
    known = _external_locations(store_root)
    if location not in known:
        atomic_write(store_root / EXTERNAL_LOCATIONS_NAME, "\n".join([*known, location]).encode("utf-8"))


def referenced_objects(root: Path | None = None, store_root: Path | None = None) -> set[str]:
    """The blake3 objects referenced by any checkpoint of any session."""
    referenced = set()
    for path in iter_checkpoint_files(root, store_root):
        for record in read_checkpoints(path):
            for item in record.files:
                if item.algorithm == backups.BLAKE3 and item.hash is not None:
                    referenced.add(item.hash)
    return referenced


def sweep_objects(store: backups.BackupStore, *, grace_seconds: float = SWEEP_GRACE_SECONDS) -> dict[str, int]:
    """Deletes objects that no session's checkpoints reference and that are older than the grace
    period (which protects an object another session has written but not yet recorded)."""
    return store.sweep(referenced_objects(store_root=store.root), grace_seconds=grace_seconds)


def _format_bytes(count: int) -> str:
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} B"


class _Ledger:
    """A manager's records and whether some are not on disk yet. Kept apart from the manager so
    they can still be written when the manager is collected or the process exits; that late
    write is skipped if the file changed since this ledger last read or wrote it (a rewind ran
    meanwhile), so it can never clobber newer records."""

    def __init__(self, path: Path, records: list[Checkpoint]) -> None:
        self.path = path
        self.records = records
        self.dirty = False
        self.stamp = _stamp(path)

    def write(self) -> None:
        write_checkpoints(self.path, self.records)
        self.dirty = False
        self.stamp = _stamp(self.path)

    def flush_quietly(self) -> None:
        if not self.dirty or _stamp(self.path) != self.stamp:
            return
        try:
            self.write()
        except OSError:
            pass  # at exit there is no one to tell; only advisory after-digests are lost


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns)


class CheckpointManager:
    """Records checkpoints and backups for one session, as the agent loop runs.

    The loop calls `open_checkpoint` at each non-meta user prompt, `backup_before_edit` before
    `write_file`/`edit_file` change a file (showing the returned notices), and
    `record_after_edit` after the tool wrote it (optionally `flush()` at the end of a turn).
    Works for sessions without a transcript.
    """

    def __init__(
        self,
        files: SessionFiles,
        cwd: Path,
        *,
        store: backups.BackupStore | None = None,
        free_space: FreeSpace | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.files = files
        self.cwd = Path(cwd)
        self.store = store if store is not None else backups.BackupStore()
        self._free_space = free_space if free_space is not None else backups.free_space
        self._now = now if now is not None else (lambda: datetime.now(timezone.utc))
        self._ledger = _Ledger(files.checkpoints, read_checkpoints(files.checkpoints))
        # Pending after-digests are written when the manager goes away or the process exits.
        weakref.finalize(self, self._ledger.flush_quietly)
        self._current: Checkpoint | None = None
        self.paused = False
        self._last_sweep = 0.0
        self._registered = False

    @classmethod
    def for_session(
        cls,
        files: SessionFiles,
        cwd: Path,
        *,
        store: backups.BackupStore | None = None,
        free_space: FreeSpace | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> CheckpointManager:
        """Loads a session's checkpoints: finishes or undoes a restore a crash interrupted, drops
        checkpoints past retention, and sweeps objects no checkpoint references any more."""
        backups.recover_pending(files.session_id)
        manager = cls(files, cwd, store=store, free_space=free_space, now=now)
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
        is still there. Unsaved after-digests are written first unless the file changed."""
        self._ledger.flush_quietly()
        self._ledger.dirty = False
        self._ledger = _Ledger(self.files.checkpoints, read_checkpoints(self.files.checkpoints))
        weakref.finalize(self, self._ledger.flush_quietly)
        current = self._current
        self._current = next((record for record in self.records if current and record.id == current.id), None)

    @property
    def checkpoints(self) -> list[Checkpoint]:
        return list(self.records)

    @property
    def current(self) -> Checkpoint | None:
        """The checkpoint opened by this manager's last `open_checkpoint`."""
        return self._current

    def open_checkpoint(self, prompt: str, message_count: int, last_message_id: str | None) -> None:
        """Opens the checkpoint of a new turn (before any of its tools run)."""
        identifier = new_uuid()
        previous = max((record.turn_number for record in self.records), default=0)
        record = Checkpoint(
            id=identifier,
            message_id=identifier,
            turn_number=max(previous, len(self.records)) + 1,
            created_at=iso_now(),
            prompt=prompt_preview(prompt),
            message_count=message_count,
            last_message_id=last_message_id,
        )
        self.records.append(record)
        self._current = record
        dropped = self.apply_retention()
        self._save()
        if dropped:
            self._sweep(force=False)

    def backup_before_edit(self, path: str) -> list[str]:
        """Backs up `path` before a tool changes it; returns notices for the UI.

        Raises:
            CheckpointError: no checkpoint is open, or the file could not be read.
        """
        record = self._require_current()
        key = resolve_path(path, self.cwd)
        if record.backup_for(key, self.cwd) is not None:
            return []
        notices: list[str] = []
        item = self._backup(path, key, notices)
        if item is not None:
            record.files.append(item)
            dropped = item.hash is not None and self.apply_retention()
            self._save()
            if dropped:
                self._sweep(force=False)
        return notices

    def record_after_edit(self, path: str) -> None:
        """Records the digest of what the tool left at `path` (for outside-edit detection)."""
        record = self._current
        if record is None:
            return
        item = record.backup_for(resolve_path(path, self.cwd), self.cwd)
        if item is None or item.skipped in (SKIPPED_SYMLINK, SKIPPED_TOO_LARGE):
            return
        try:
            state = self.store.inspect_file(Path(resolve_path(path, self.cwd)))
        except OSError:
            state = None
        if state is not None and state.kind == "regular":
            item.after_known, item.after_hash = True, state.content_id
        elif state is not None and state.kind == "missing":
            item.after_known, item.after_hash = True, None
        else:
            item.after_known, item.after_hash = False, None
        # Not fsynced on its own: the after-digest only sharpens outside-edit detection, and
        # each durable write costs fsyncs on every edit. It reaches disk with the next backup or
        # checkpoint, with `flush()`, or when the process exits; a crash before that only makes
        # the check skip this file (never a false alarm, never a lost backup).
        self._ledger.dirty = True

    def flush(self) -> None:
        """Writes after-digests recorded since the last write (call at the end of a turn for
        them to survive a crash; process exit does it too)."""
        if self._ledger.dirty:
            self._save()

    def apply_retention(self) -> bool:
        """Drops checkpoints older than 30 days, then the oldest ones while the session holds
        more than 200 backups (never the open one). Returns whether anything was dropped."""
        cutoff = self._now() - timedelta(days=RETENTION_DAYS)
        kept = [record for record in self.records if record is self._current or not _older_than(record, cutoff)]
        while sum(record.backup_count for record in kept) > MAX_BACKUPS_PER_SESSION and len(kept) > 1:
            if kept[0] is self._current:
                break
            kept.pop(0)
        dropped = len(kept) != len(self.records)
        self.records = kept
        return dropped

    def _backup(self, path: str, key: str, notices: list[str]) -> FileBackup | None:
        target = Path(key)
        try:
            status = os.lstat(target)
        except FileNotFoundError:
            return FileBackup(path=path, hash=None, algorithm=backups.BLAKE3, after_known=False)
        except OSError as error:
            raise CheckpointError(f"cannot back up {path}: {error.strerror}") from None
        if stat.S_ISLNK(status.st_mode):
            notices.append(f"{path} is a symlink; it was not followed or backed up, and a rewind leaves it as it is")
            return FileBackup(path=path, hash=None, skipped=SKIPPED_SYMLINK)
        if not stat.S_ISREG(status.st_mode):
            notices.append(f"{path} is not a regular file; it was not backed up")
            return None
        if status.st_size > backups.MAX_BACKUP_SIZE:
            notices.append(f"{path} is over 10 MB; it was not backed up, and a rewind leaves it as it is")
            return FileBackup(path=path, hash=None, skipped=SKIPPED_TOO_LARGE)
        if not self._space_for(status.st_size, path, notices):
            return FileBackup(path=path, hash=None, skipped=SKIPPED_DISK_FULL)
        try:
            snapshot = self.store.backup_file(target)
        except OSError as error:
            if error.errno in (errno.ENOSPC, errno.EDQUOT):
                self._pause(path, notices, None)
                return FileBackup(path=path, hash=None, skipped=SKIPPED_DISK_FULL)
            raise CheckpointError(f"cannot back up {path}: {error.strerror or error}") from None
        if snapshot.kind == "regular":
            return FileBackup(path=path, hash=snapshot.content_id, algorithm=backups.BLAKE3, mode=snapshot.mode)
        if snapshot.kind == "missing":
            return FileBackup(path=path, hash=None, algorithm=backups.BLAKE3)
        if snapshot.kind == "symlink":
            notices.append(f"{path} is a symlink; it was not followed or backed up, and a rewind leaves it as it is")
            return FileBackup(path=path, hash=None, skipped=SKIPPED_SYMLINK)
        if snapshot.kind == "too_large":
            notices.append(f"{path} is over 10 MB; it was not backed up, and a rewind leaves it as it is")
            return FileBackup(path=path, hash=None, skipped=SKIPPED_TOO_LARGE)
        notices.append(f"{path} is not a regular file; it was not backed up")
        return None

    def _space_for(self, size: int, path: str, notices: list[str]) -> bool:
        """The disk-low pause: pause below twice the file's size, resume at twice 100 MiB."""
        free = self._free_space(self.store.root)
        if self.paused:
            if free is None or free >= RESUME_FREE_BYTES:
                self.paused = False
                notices.append(f"disk space is available again ({_format_bytes(free or 0)} free); checkpointing resumed")
            else:
                return False
        if free is not None and free < 2 * size:
            self._pause(path, notices, free)
            return False
        return True

    def _pause(self, path: str, notices: list[str], free: int | None) -> None:
        if self.paused:
            return
        self.paused = True
        shown = "" if free is None else f" ({_format_bytes(free)} free)"
        notices.append(
            f"disk space is low{shown}: checkpointing is paused for this session and {path} was not backed up; "
            f"it resumes once {_format_bytes(RESUME_FREE_BYTES)} are free"
        )

    def _require_current(self) -> Checkpoint:
        if self._current is None:
            raise CheckpointError("no checkpoint is open; call open_checkpoint at the start of the turn")
        return self._current

    def _save(self) -> None:
        if not self._registered:
            register_external_location(self.files.checkpoints, self.store.root)
            self._registered = True
        self._ledger.write()

    def _sweep(self, *, force: bool) -> None:
        moment = time.monotonic()
        if not force and moment - self._last_sweep < SWEEP_INTERVAL_SECONDS:
            return
        self._last_sweep = moment
        try:
            sweep_objects(self.store)
        except CheckpointError:
            pass  # some session's checkpoints cannot be read, so any object may be needed: keep all


def _older_than(record: Checkpoint, cutoff: datetime) -> bool:
    created = parse_iso(record.created_at)
    if created is None:
        return False
    if created.tzinfo is None:
        created = created.replace(tzinfo=timezone.utc)
    return created < cutoff

