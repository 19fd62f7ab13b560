"""Appending to a transcript: the only code that writes session entries (format §4.1).

Rules, each there for a reason:
- A new session is buffered until its first assistant message, then the header and the buffered
  entries reach disk in one write (the real CLI's rule; no empty sessions on disk).
- Entries are committed per turn: `commit()` writes every pending line (JSON and newline
  together) in one `write` and fsyncs, so a process killed mid-turn leaves the file ending at the
  previous commit, or at worst with a torn tail that readers skip.
- A commit that fails (a full disk: a short write, then `ENOSPC`; a failed fsync) is cut back to
  where it started, so the file ends at the previous commit exactly as a kill before it would
  leave it: never with half a turn (a prompt and a `tool_use` with no result) that the next
  resume would take for the context. Only the bytes this commit wrote are cut, never older ones.
- A new transcript appears whole (temp file, fsync, hard link), never empty or with a torn header.
- Before the first append to a file that does not end in `\\n`, the torn tail is ended with a
  newline, so a new entry is never glued onto a broken fragment (pi and the real CLI lose the
  next message that way). The fragment itself is kept, never truncated.
- One writer per transcript (`WriterLock`); new files are 0600, new folders 0700.
- Every line starts with `type, id, parentId, timestamp`.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from ..errors import InvalidSessionError
from ..storage import ids
from ..storage.durable import create_new_file, ensure_dir, finish_write, fsync_dir, open_for_write, write_all
from ..storage.ids import iso_now, new_entry_id
from ..storage.jsonfmt import encode_entry, encode_line
from ..storage.regular import open_regular
from .files import SessionFiles
from .format import ENTRY_TYPES, ENVELOPE_KEYS, LEAF_MARKER_TYPE, build_header
from .lock import WriterLock
from .reader import Session


class SessionWriter:
    """Appends entries to one session; use as a context manager (it holds the writer lock)."""

    def __init__(self, files: SessionFiles, cwd: str, *, header_extra: dict[str, Any] | None = None,
                 persist: bool = True) -> None:
        self.files = files
        self.cwd = cwd
        self.persist = persist
        self._header_extra = dict(header_extra or {})
        self._started_at = iso_now()  # the header's timestamp: when the session started, not when it was flushed
        self._lock = WriterLock(files.transcript) if persist else None
        self._pending: list[bytes] = []
        self._pending_has_assistant = False
        self._commits = 0
        self._known_ids: set[str] = set()
        self._session: Session | None = None
        self._in_file: Callable[[str], bool] | None = None  # whether an id is taken in the file
        self._exists = False
        self._needs_newline = False
        self._descriptor: int | None = None  # the transcript, open for appends while the writer lives
        self._transcript = files.sidecar_path(".jsonl")
        self.leaf_id: str | None = None

    def __enter__(self) -> SessionWriter:
        if self._lock is not None:
            self._lock.acquire()
        try:
            self._load_existing()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_descriptor", None) is not None:  # a writer dropped without `close`
            self._close_descriptor()

    def _load_existing(self) -> None:
        transcript = self.files.transcript
        if not self.persist or not transcript.exists():
            return
        from .reader import open_session  # the reader migrates legacy files before we append

        session = open_session(transcript, tail=False)  # every fresh id is checked against the whole file
        self._session = session
        self._exists = True
        self._needs_newline = not session.ends_with_newline()
        self.leaf_id = session.leaf_id
        self._in_file = session.has_entry

    @property
    def exists_on_disk(self) -> bool:
        """Whether the transcript file has been created."""
        return self._exists

    def _id_taken(self, candidate: str) -> bool:
        if candidate in self._known_ids:
            return True
        return self._session is not None and self._session.has_entry(candidate)

    def __contains__(self, candidate: object) -> bool:
        """Whether an entry id is taken in this session (written, pending, or in the file)."""
        return isinstance(candidate, str) and self._id_taken(candidate)

    def _new_id(self) -> str:
        # The common case inline (one fresh id, free in this writer and in the file); a collision
        # goes through `new_entry_id`'s retries and its uuid fallback.
        known, in_file = self._known_ids, self._in_file
        entry_id = ids.fresh_entry_id()
        if entry_id in known or (in_file is not None and in_file(entry_id)):
            entry_id = new_entry_id(self)
        known.add(entry_id)
        return entry_id

    def append_entry(self, entry_type: str, fields: dict[str, Any], *, parent_id: str | object | None = ...) -> str:
        """Queues one entry (a child of the leaf unless `parent_id` is given) and returns its id.

        The entry reaches disk at the next `commit()`.
        """
        if entry_type not in ENTRY_TYPES:
            raise InvalidSessionError(f"unknown entry type {entry_type!r}")
        if not ENVELOPE_KEYS.isdisjoint(fields):  # no set built per entry
            reserved = ENVELOPE_KEYS.intersection(fields)
            raise InvalidSessionError(f"entry fields may not set {', '.join(sorted(reserved))}; the writer sets them")
        assistant = entry_type == "message" and fields.get("message", {}).get("role") == "assistant"
        parent = self.leaf_id if parent_id is ... else cast("str | None", parent_id)
        return self._queue(entry_type, fields, parent, assistant)

    def _queue(self, entry_type: str, fields: dict[str, Any], parent: str | None, assistant: bool) -> str:
        """The line of `{"type", "id", "parentId", "timestamp", **fields}`, encoded now (a value
        JSON cannot hold fails here, not at the commit), without building that dict."""
        entry_id = self._new_id()
        self._pending.append(encode_entry(entry_type, entry_id, parent, iso_now(), fields))
        if assistant:
            self._pending_has_assistant = True
        self.leaf_id = entry_id
        return entry_id

    def append_message(self, message: dict[str, Any], *, usage: dict[str, Any] | None = None,
                       model: str | None = None, effort: str | None = None) -> str:
        """Queues a `message` entry; `usage`, `model` and `effort` go on assistant entries only."""
        fields: dict[str, Any] = {"message": message}
        assistant = message.get("role") == "assistant"
        if assistant:
            for key, value in (("usage", usage), ("model", model), ("effort", effort)):
                if value is not None:
                    fields[key] = value
        return self._queue("message", fields, self.leaf_id, assistant)

    def mark(self) -> tuple[int, int, str | None, bool]:
        """A point among the pending entries that `discard_to` can go back to."""
        return (self._commits, len(self._pending), self.leaf_id, self._pending_has_assistant)

    def discard_to(self, mark: tuple[int, int, str | None, bool]) -> None:
        """Drops the entries queued since `mark` (they never reach disk); the leaf goes back too.

        Raises:
            InvalidSessionError: a commit happened since the mark (committed entries stay).
        """
        commits, count, leaf_id, has_assistant = mark
        if commits != self._commits:
            raise InvalidSessionError("cannot discard entries that were committed since the mark")
        del self._pending[count:]
        self.leaf_id, self._pending_has_assistant = leaf_id, has_assistant

    def move_leaf(self, target_entry_id: str | None, data: dict[str, Any]) -> str:
        """Moves the leaf to `target_entry_id` (None: before the first entry) and persists it.

        The move is a `custom` entry (`customType: "commandcode.leaf"`), a child of the target:
        the real CLI takes the last line as the leaf, so both tools resume at the target, and a
        `custom` entry never reaches the model.
        """
        if target_entry_id is not None and not self._id_taken(target_entry_id):
            raise InvalidSessionError(f"no entry {target_entry_id} in {self.files.transcript.name}")
        marker = self.append_entry("custom", {"customType": LEAF_MARKER_TYPE, "data": data}, parent_id=target_entry_id)
        self.commit(force=True)
        return marker

    def commit(self, *, force: bool = False) -> bool:
        """Writes and fsyncs every pending entry; returns whether anything reached disk.

        A new session stays in memory until it holds an assistant message (or `force`, used when
        a failed first turn must still be recorded, as the real CLI does).
        """
        if not self._pending or not self.persist:
            return False
        if not self._exists and not (self._pending_has_assistant or force):
            return False
        payload = b"".join(self._pending)
        if self._exists:
            self._append(payload)
        else:
            self._create(payload)
        self._pending.clear()
        self._commits += 1
        return True

    def _create(self, payload: bytes) -> None:
        """Creates the transcript whole: the header and the first entries go to a hidden temp file
        that is fsynced, then hard-linked into place (which, like `O_EXCL`, fails if a transcript
        appeared meanwhile). A crash leaves no transcript or a complete one, never an empty file or
        a torn header (which the real CLI would take for a legacy file and migrate to an empty
        session, format §4.5)."""
        transcript = self.files.transcript
        ensure_dir(transcript.parent)
        header = build_header(self.files.session_id, self._started_at, self.cwd, extra=self._header_extra)
        data = encode_line(header) + payload
        temporary = transcript.with_name(f".{transcript.name}.{os.getpid()}.tmp")
        descriptor = open_for_write(temporary, exclusive=False)
        try:
            finish_write(descriptor, data)
            try:
                os.link(temporary, transcript)
            except OSError as error:
                if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                    raise
                self._create_in_place(transcript, data)  # a file system without hard links
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        fsync_dir(transcript.parent)
        self._exists = True

    @staticmethod
    def _create_in_place(transcript: Path, data: bytes) -> None:
        create_new_file(transcript, data)  # ours (O_EXCL): a failure leaves no half-created session

    def _append(self, payload: bytes) -> None:
        descriptor, start = self._append_descriptor()  # one writer (the lock): every byte past `start` is ours
        if self._needs_newline and not _ends_with_newline(descriptor):
            payload = b"\n" + payload
        try:
            write_all(descriptor, payload)
            os.fdatasync(descriptor)
        except BaseException:
            self._needs_newline = True  # if the cut fails, the next append first ends the torn line
            _cut_back(descriptor, start)
            self._close_descriptor()
            raise
        self._needs_newline = False

    def _append_descriptor(self) -> tuple[int, int]:
        """The transcript's descriptor (read: the torn-tail check) and its size. It is opened once
        and kept for the writer's life, while the path still leads to the file it opened (a
        program that replaced the transcript gets its new file appended to, as before)."""
        transcript = self._transcript  # a string: no `Path` built per commit
        if self._descriptor is not None:
            try:
                held, named = os.fstat(self._descriptor), os.stat(transcript, follow_symlinks=False)
                if (held.st_ino, held.st_dev) == (named.st_ino, named.st_dev):
                    return self._descriptor, held.st_size
            except OSError:
                pass
            self._close_descriptor()
        descriptor = open_regular(transcript, os.O_RDWR | os.O_APPEND)
        self._descriptor = descriptor
        return descriptor, os.fstat(descriptor).st_size

    def _close_descriptor(self) -> None:
        if self._descriptor is not None:
            descriptor, self._descriptor = self._descriptor, None
            with contextlib.suppress(OSError):
                os.close(descriptor)

    def close(self) -> None:
        """Releases the lock and the transcript's descriptor. Uncommitted entries are dropped, as a
        crash would drop them."""
        self._close_descriptor()
        if self._lock is not None:
            self._lock.release()


def _ends_with_newline(descriptor: int) -> bool:
    size = os.fstat(descriptor).st_size
    return size == 0 or os.pread(descriptor, 1, size - 1) == b"\n"


def _cut_back(descriptor: int, start: int) -> None:
    """Cuts a failed append back to `start`, the size the file had before it (best effort: when
    even that fails, the torn tail is one that readers skip, and the next append ends it)."""
    with contextlib.suppress(OSError):
        if os.fstat(descriptor).st_size > start:
            os.ftruncate(descriptor, start)
            os.fdatasync(descriptor)
