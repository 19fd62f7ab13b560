"""Writing a new session whole from another one: what fork and clone share (format §4.8).

Owns: `NewSessionFiles` — the files a fork or clone creates, made so that a kill at any moment
leaves either no new session or a complete one, and a failure removes every file it created:

- the transcript is built in a hidden temp file (`.<sid>.jsonl.<pid>.tmp`) that is fsynced,
  and hard-linked into place **last** (after the meta and checkpoints), so a transcript that
  exists always has its lineage and checkpoints beside it;
- each sidecar is written atomically (temp + rename), and remembered, so `discard()` takes away
  exactly what this operation made and nothing that was there before;

and `lineage_meta` (the meta keys a copy records) and `EntryIds` (fresh ids not in the source).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from pathlib import Path
from typing import Any, Protocol

from ..storage.durable import atomic_write, create_new_file, ensure_dir, fsync_dir, open_for_write, told_of
from ..storage.ids import iso_now, new_entry_id
from ..storage.jsonfmt import dumps_pretty
from .files import SessionFiles
from .reader import Session
from .stale_temps import remove_stale_temps


class EntryIds:
    """Fresh entry ids that the source session does not hold (its index answers)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._issued: set[str] = set()

    def __contains__(self, candidate: object) -> bool:
        return isinstance(candidate, str) and (candidate in self._issued or self._session.has_entry(candidate))

    def new(self) -> str:
        entry_id = new_entry_id(self)
        self._issued.add(entry_id)
        return entry_id


class LineageSource(Protocol):
    """What `lineage_meta` reads of a source: a `Session`, or a fork's `fork_ends.SourceEnds`."""

    @property
    def id(self) -> str: ...
    @property
    def meta(self) -> dict[str, Any]: ...
    @property
    def model(self) -> str | None: ...
    @property
    def git_branch(self) -> str | None: ...


def lineage_meta(source: LineageSource, *, title: str | None, named: bool, branch_point: str | None) -> dict[str, Any]:
    """The meta of a fork or clone (ref §8): `title` (+ `userRenamed` for a fork), `model`
    (the source meta's, else the model its transcript last used), `parentSessionId`, `forkedAt`,
    and for a fork `branchPoint`; `gitBranch` is carried over so branch filters still find it."""
    meta: dict[str, Any] = {}
    if title:
        meta["title"] = title
    if named:
        meta["userRenamed"] = True
    model = source.meta.get("model")
    if not isinstance(model, str) or not model:
        model = source.model
    if model:
        meta["model"] = model
    meta["parentSessionId"] = source.id
    meta["forkedAt"] = iso_now()
    if branch_point:
        meta["branchPoint"] = branch_point
    git_branch = source.git_branch
    if git_branch:
        meta["gitBranch"] = git_branch
    return meta


class NewSessionFiles:
    """The files of a session being made whole; use as a context manager: leaving it with an
    exception (or without `publish`) removes everything it created."""

    def __init__(self, files: SessionFiles) -> None:
        self.files = files
        self.temporary = files.transcript.with_name(f".{files.transcript.name}.{os.getpid()}.tmp")
        self._created: list[Path] = []
        self._created_dirs: list[Path] = []
        self._published = False

    def __enter__(self) -> NewSessionFiles:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.temporary)
        if not self._published:
            self.discard()

    def open_transcript(self) -> int:
        """A write descriptor on the transcript's temp file (created new, 0600)."""
        ensure_dir(self.files.transcript.parent)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.temporary)  # one left by a killed run of this very pid
        remove_stale_temps(self.files.transcript.parent)  # and those of other killed runs
        if os.path.lexists(self.files.transcript) or os.path.lexists(self.files.meta):
            raise FileExistsError(errno.EEXIST, "a session with this id exists", str(self.files.transcript))
        try:
            return open_for_write(self.temporary, exclusive=True)
        except OSError as error:
            raise told_of(self.files.transcript, error) from None

    def track(self, path: str | os.PathLike[str], *, folder: bool = False) -> None:
        """Counts a file (or a whole folder) made for this session as this operation's own, so
        `discard()` takes it away (the sub-agent runs a fork copies, `subagent_copy.py`)."""
        (self._created_dirs if folder else self._created).append(Path(path))

    def write_sidecar(self, path: Path, data: bytes) -> None:
        """Writes one sidecar (meta, checkpoints) atomically; refuses to replace an existing one."""
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, "exists already", str(path))
        self._created.append(path)
        atomic_write(path, data)

    def write_meta(self, meta: dict[str, Any]) -> None:
        self.write_sidecar(self.files.meta, dumps_pretty(meta).encode("utf-8"))

    def link_file_history(self, source: Path) -> int:
        """Shares the real CLI's raw backups of `source` (`file-history/<sid>/`) with this session
        by hard links (a copy where links are refused); returns how many files."""
        if not source.is_dir():
            return 0
        target = self.files.file_history
        if not target.exists():
            ensure_dir(target)
            self._created_dirs.append(target)
        count = 0
        for entry in sorted(source.iterdir()):
            if not entry.is_file() or entry.is_symlink():
                continue
            destination = target / entry.name
            if destination.exists():
                continue
            self._created.append(destination)
            try:
                os.link(entry, destination)
            except OSError:
                create_new_file(destination, entry.read_bytes())
            count += 1
        fsync_dir(target)
        return count

    def publish(self) -> None:
        """Links the finished (fsynced) transcript temp into place: from here the session exists."""
        transcript = self.files.transcript
        try:
            os.link(self.temporary, transcript)
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            os.rename(self.temporary, transcript)  # no hard links: rename cannot tear either
        self._created.append(transcript)
        fsync_dir(transcript.parent)
        self._published = True

    def discard(self) -> None:
        """Removes every file and folder this operation created (best effort, newest first)."""
        for path in reversed(self._created):
            with contextlib.suppress(OSError):
                os.unlink(path)
        for folder in reversed(self._created_dirs):
            shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            fsync_dir(self.files.transcript.parent)
