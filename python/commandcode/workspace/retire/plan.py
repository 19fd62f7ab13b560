"""Which sessions a sweep takes: old by last activity, not open, not named, not kept by settings.

A session's age is its last activity: the newest `timestamp` among the transcript's last entries
(read from the end of the file), else the header's; never the file's mtime, which a copy or a
backup tool resets. A session with neither is not swept (it is not judged on a guess).

Never taken: a session open right now (its writer lock is held: `open_now`), one with a restore
a crash interrupted (its journal still exists), a named one (a `session_info` name, or a meta
title the user gave) unless `include_named`, and anything when `cleanupPeriodDays` is 0.

`plan_sweep` also works out, for each session taken, which store objects only the swept sessions
reference (`own`: archived with it, then collected) and which are shared with sessions that stay
(`shared`: left in the store, listed in the archive's `.refs`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from ...catalog.listing import project_dirs, transcripts_in
from ...checkpoints.gc import archived_references, digests_by_session, journal_references
from ...checkpoints.packed import packed_sizes
from ...checkpoints.references import iter_checkpoint_files
from ...config.paths import data_dir, objects_dir
from ...sessions.facts import last_activity, user_given_name
from ...sessions.files import SessionFiles
from ...sessions.format import read_header_cwd
from ...sessions.lock import is_locked
from ..parts import index_part, session_parts, size_of
from ..scratchpad import folder_bytes, scratchpad_path

DAY = 86400.0


@dataclass
class Candidate:
    """One session a sweep looked at."""

    files: SessionFiles
    last_activity: float | None
    name: str | None = None
    cwd: str | None = None
    skip: str | None = None  # why it stays ("open now", "named", "newer", ...)
    parts: list[Path] = field(default_factory=list)
    session_bytes: int = 0
    index_bytes: int = 0
    scratchpad_bytes: int = 0
    references: set[str] = field(default_factory=set)
    own: set[str] = field(default_factory=set)
    shared: set[str] = field(default_factory=set)

    @property
    def session_id(self) -> str:
        return self.files.session_id


@dataclass
class SweepPlan:
    """What a sweep takes (`chosen`) and what it passed over, with the bytes it would free."""

    older_than_days: float
    chosen: list[Candidate]
    kept: list[Candidate]
    object_sizes: dict[str, int]
    disabled_by: str | None = None

    @property
    def object_bytes(self) -> int:
        """Bytes of the store objects only the chosen sessions reference (counted once)."""
        own = set().union(*(candidate.own for candidate in self.chosen)) if self.chosen else set()
        return sum(self.object_sizes.get(object_id, 0) for object_id in own)

    @property
    def freed_bytes(self) -> int:
        return (sum(c.session_bytes + c.index_bytes + c.scratchpad_bytes for c in self.chosen) + self.object_bytes)


def open_now(transcript: Path) -> bool:
    """Whether a writer (in another process) holds the session's lock right now; the sweep takes
    the lock itself before it removes anything, so this only sorts the plan."""
    return is_locked(transcript)


def _freed_by_removing(parts: list[Path]) -> int:
    """The bytes removing `parts` frees: a file linked from elsewhere too (a raw blob another
    session also links, beside its shared copy in `raw-objects/`: more than two links) frees
    nothing; one linked only beside that copy is freed once the sweep drops the copy."""
    total = 0
    for path in parts:
        try:
            status = os.lstat(path)
        except OSError:
            continue
        if status.st_nlink <= 2:
            total += status.st_size
    return total


def _references(path: Path) -> set[str]:
    from ...checkpoints.digests import checkpoint_references

    return checkpoint_references(path)  # a huge file: its digests, read with bounded memory


def _object_sizes() -> dict[str, int]:
    sizes: dict[str, int] = {}
    root = objects_dir()
    if not root.is_dir():
        return sizes
    for folder in root.iterdir():
        if len(folder.name) == 2 and folder.is_dir():
            for entry in os.scandir(folder):
                if len(entry.name) == 62:
                    sizes[folder.name + entry.name] = entry.stat(follow_symlinks=False).st_size
    for object_id, size in packed_sizes(root).items():  # a redo point's, until a collection absorbs it
        sizes.setdefault(object_id, size)
    return sizes


def _unreadable(transcript: Path) -> str | None:
    """Why a transcript that gave no time cannot be read, when that is why (else None)."""
    try:
        os.close(os.open(transcript, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC))  # a FIFO does not block it
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    return None


def candidates(cwd: str, *, older_than_days: float, include_named: bool, now: float | None = None,
               keep: Collection[str] = ()) -> list[Candidate]:
    """Every session of every project, each with the reason it stays (`skip`) or none; the ids in
    `keep` are open now (a shell showing one it resumed holds no lock until its first turn)."""
    moment = time.time() if now is None else now
    found = []
    journals = data_dir() / "journals"
    for folder in project_dirs(all_projects=True, cwd=cwd):
        for transcript in sorted(transcripts_in(folder)):
            files = SessionFiles.for_transcript(transcript)
            candidate = Candidate(files, last_activity(transcript))
            if candidate.last_activity is None:
                candidate.skip = _unreadable(transcript) or "no entry time"
            elif moment - candidate.last_activity <= older_than_days * DAY:
                candidate.skip = "active recently"
            elif (journals / f"{files.session_id}.json").exists():
                candidate.skip = "an interrupted restore is pending"
            else:
                candidate.name = user_given_name(files)
                if candidate.name and not include_named:
                    candidate.skip = "named"
                elif files.session_id in keep or open_now(transcript):
                    candidate.skip = "open now"
            found.append(candidate)
    return found


def plan_sweep(cwd: str, *, older_than_days: float, include_named: bool, period_setting: int | None = None,
               now: float | None = None, keep: Collection[str] = ()) -> SweepPlan:
    """The sessions a sweep takes and what it would free.

    Raises:
        CheckpointError: a checkpoints file cannot be read (objects cannot be attributed safely).
    """
    if period_setting == 0:
        return SweepPlan(older_than_days, [], [], {}, disabled_by="cleanupPeriodDays is 0")
    everyone = candidates(cwd, older_than_days=older_than_days, include_named=include_named, now=now, keep=keep)
    chosen = [candidate for candidate in everyone if candidate.skip is None]
    chosen_files = {os.path.abspath(candidate.files.sidecar_path(".checkpoints.jsonl")): candidate for candidate in chosen}
    kept_refs = journal_references() | archived_references()
    for path in iter_checkpoint_files(store_root=objects_dir()):
        refs = _references(path)
        owner = chosen_files.get(os.path.abspath(path))
        if owner is not None:
            owner.references = refs
        else:
            kept_refs |= refs
    sizes = _object_sizes()
    by_key = {(os.path.basename(c.files.folder), c.session_id): c for c in chosen}
    for key, digests in digests_by_session().items():  # redo points and any other sidecar's digests
        owner = by_key.get(key)
        if owner is not None:
            owner.references |= digests & sizes.keys()  # only those that are objects of the store
        else:
            kept_refs |= digests
    for candidate in chosen:
        candidate.own = candidate.references - kept_refs
        candidate.shared = candidate.references & kept_refs
        candidate.parts = session_parts(candidate.files)
        candidate.session_bytes = _freed_by_removing(candidate.parts)
        candidate.index_bytes = size_of([index_part(candidate.files)])
        candidate.cwd = read_header_cwd(candidate.files.sidecar_path(".jsonl"))
        pad = scratchpad_path(candidate.session_id, candidate.cwd) if candidate.cwd else None
        candidate.scratchpad_bytes = folder_bytes(os.path.dirname(pad)) if pad and os.path.isdir(pad) else 0
    return SweepPlan(older_than_days, chosen, [c for c in everyone if c.skip is not None], sizes)
