"""Garbage collection of the shared object store: mark every object something still needs, sweep the rest.

Marked (kept) are the objects named by
- any checkpoint (or redo point) of any session: every `*.checkpoints.jsonl` under `projects/`
  and the ones `external-checkpoints.txt` lists (`sweep.referenced_objects`), and, to be safe
  against record kinds a parser of today skips, every 64-hex digest in any session sidecar
  under `projects/` (`sidecar_digests`);
- any restore journal (`journals/*.json`): an interrupted restore reads its sources from the store;
- any live root: the objects a running session's shell-tracking baseline counts on, which no
  record names yet (`gc_roots.py`: a roots file per process, kept while its lock is held);
- any session archive: the shared objects an archived session still references stay in the
  store; each archive `archives/<project>/<sid>.ccarchive` has them listed, one a line, in
  `<sid>.ccarchive.refs`, written before the archive and removed after it.

First, every pack (a redo point's objects in one file, format §7.2) is absorbed: its objects become
loose objects (young ones) and the pack is deleted, so the sweep judges loose objects only. A dry
run absorbs nothing and does not count packed objects.

A checkpoints file that cannot be read stops the collection (any object may be needed). Swept
(deleted) are the other objects, and temporaries, whose mtime is older than the collection's start
less the grace period (one hour): an object written, or re-put (which refreshes its mtime), after
the collection began or shortly before is never removed.

Against a concurrent writer, every put takes `objects/gc.lock` shared (`store.BackupStore`) and the
sweep takes it exclusively around each batch of stat-then-unlink, so a re-put of an object the
sweep has judged old cannot slip between the judgement and the unlink. A second collection at the
same time is refused (`gc.run.lock`). Kill -9 at any moment deletes nothing that is marked;
an interrupted collection needs no recovery: the next run marks and sweeps again.

A collection of the default store also removes the hidden transcript temps killed forks and
clones left in `projects/` (never one whose process is alive) and settles the forks' recovery
records, one listing of each project folder doing both (`sessions/project_upkeep.py`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..config.paths import ARCHIVE_REFS_SUFFIX, archives_dir, data_dir, objects_dir, projects_dir
from ..errors import CommandcodeError
from ..sessions.project_upkeep import upkeep_projects
from ..storage.regular import read_if_exists
from .digests import file_digests
from .gc_roots import live_root_ids
from .references import SWEEP_GRACE_SECONDS, referenced_objects
from .store import GC_LOCK_NAME

RUN_LOCK_NAME = "gc.run.lock"
BATCH = 128
_DIGEST = re.compile(rb"[0-9a-f]{64}")
_HEX = frozenset("0123456789abcdef")


@dataclass
class GcReport:
    """What a collection found: objects kept (`kept`, of which `young` only for their age) and
    deleted or (dry run) deletable, with their bytes; temporaries removed."""

    kept: int = 0
    kept_bytes: int = 0
    young: int = 0
    deleted: int = 0
    deleted_bytes: int = 0
    temporaries: int = 0
    dry_run: bool = False
    deleted_ids: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"dry_run": self.dry_run, "kept_objects": self.kept, "kept_bytes": self.kept_bytes,
                "kept_young": self.young, "deleted_objects": self.deleted, "deleted_bytes": self.deleted_bytes,
                "removed_temporaries": self.temporaries}


def journal_references(journals: Path | None = None) -> set[str]:
    """Every blake3 digest a restore journal names (its sources must stay)."""
    folder = journals if journals is not None else data_dir() / "journals"
    found: set[str] = set()
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return found
    for name in names:
        if name.endswith(".json"):
            data = read_if_exists(folder / name)
            if data:
                found.update(match.decode() for match in _DIGEST.findall(data))
    return found


def archived_references(archives: Path | None = None) -> set[str]:
    """Every object an archived session references but left in the store (its `.refs` lists)."""
    folder = archives if archives is not None else archives_dir()
    found: set[str] = set()
    for refs in sorted(folder.glob(f"*/*{ARCHIVE_REFS_SUFFIX}")) if folder.is_dir() else []:
        data = read_if_exists(refs)
        if data:
            found.update(match.decode() for match in _DIGEST.findall(data))
    return found


def digests_by_session(projects: Path | None = None) -> dict[tuple[str, str], set[str]]:
    """`(project folder, session id) -> every 64-hex digest in that session's sidecars` (every
    `<sid>.<kind>.json[l]` file but the transcript `<sid>.jsonl`)."""
    folder = projects if projects is not None else projects_dir()
    found: dict[tuple[str, str], set[str]] = {}
    for project in sorted(folder.iterdir()) if folder.is_dir() else []:
        if not project.is_dir() or project.is_symlink():
            continue
        for path in sorted(project.iterdir()):
            session_id, dot, rest = path.name.partition(".")
            if not dot or "." not in rest or not rest.endswith((".json", ".jsonl")):
                continue  # a transcript `<sid>.jsonl`, or no sidecar of a session
            try:
                digests = file_digests(path)  # bounded memory; a sparse file's holes are skipped
            except FileNotFoundError:
                continue
            if digests:
                found.setdefault((project.name, session_id), set()).update(digests)
    return found


def sidecar_digests(projects: Path | None = None) -> set[str]:
    """Every 64-hex digest in a session sidecar of any project: the redo points, and any later
    record kind a parser of today would skip, keep their objects."""
    return set().union(*digests_by_session(projects).values())


def marked(extra_referenced: Iterable[str] = ()) -> set[str]:
    """The objects a collection keeps whatever their age.

    Raises:
        CheckpointError: a checkpoints file cannot be read.
    """
    keep = referenced_objects(store_root=objects_dir())
    keep |= journal_references()
    keep |= archived_references()
    keep |= sidecar_digests()
    keep |= live_root_ids(objects_dir())  # what running sessions' shell tracking counts on
    keep.update(extra_referenced)
    return keep


def _entries(root: Path) -> Iterable[tuple[Path, str | None]]:
    """`(path, object id)` of every object, `(path, None)` of every temporary, in the fan-out folders."""
    try:
        folders = sorted(os.listdir(root))
    except FileNotFoundError:
        return
    for prefix in folders:
        if len(prefix) != 2 or not set(prefix) <= _HEX:
            continue
        try:
            names = sorted(os.listdir(root / prefix))
        except (NotADirectoryError, FileNotFoundError):
            continue
        for name in names:
            if len(name) == 62 and set(name) <= _HEX:
                yield root / prefix / name, prefix + name
            elif name.endswith(".cctmp"):
                yield root / prefix / name, None


def _open_lock(path: Path) -> int:
    """Opens (creating) a lock file of the store; one that cannot be opened (a planted symlink,
    a folder) stops the collection: puts that cannot take it then run unguarded, so none may run."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as error:
        refused = isinstance(error, PermissionError) or error.errno == errno.EROFS  # not a thing in its place
        raise CommandcodeError(f"cannot lock the object store for garbage collection: {path}: {error.strerror}",
                               hint=f"make {path.parent} writable, then retry" if refused
                               else "remove whatever is in that lock file's place, then retry") from None


def collect(*, dry_run: bool = False, grace_seconds: float = SWEEP_GRACE_SECONDS,
            extra_referenced: Iterable[str] = (), root: Path | None = None) -> GcReport:
    """Marks, then sweeps the store (or, `dry_run`, reports what a sweep would delete).

    Raises:
        CheckpointError: a checkpoints file cannot be read (nothing was deleted).
        CommandcodeError: another collection is running.
    """
    store = root if root is not None else objects_dir()
    report = GcReport(dry_run=dry_run)
    if root is None:  # the transcript temps killed forks and clones left, and the forks whose bodies
        # the disk may not hold yet, in one pass over the project folders (`sessions/project_upkeep.py`)
        report.temporaries += upkeep_projects(projects_dir(), dry_run=dry_run)
    if not store.is_dir():
        return report
    if dry_run:  # deletes nothing, so it needs no lock (and creates no lock file)
        _sweep(store, marked(extra_referenced), time.time() - grace_seconds, report)
        return report
    run_lock = _open_lock(store / RUN_LOCK_NAME)
    try:
        try:
            fcntl.flock(run_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CommandcodeError("another garbage collection of the object store is running",
                                   hint="wait for it to finish, then retry") from None
        cutoff = time.time() - grace_seconds  # the start of the collection, less the grace period
        report.temporaries += _absorb_packs(store)
        keep = marked(extra_referenced)
        _sweep(store, keep, cutoff, report)
    finally:
        os.close(run_lock)
    return report


def _absorb_packs(store: Path) -> int:
    """Makes the objects of every pack loose (format §7.2) before anything is judged: the sweep
    judges loose objects only, and the ones absorbed now are young. Returns the pack temps removed.

    Raises:
        CommandcodeError: a pack could not be absorbed (nothing was deleted).
    """
    from .store import BackupStore

    try:
        return BackupStore(store).absorb_packs()["removed_temporaries"]
    except OSError as error:
        raise CommandcodeError(f"cannot absorb the object store's packs: {error.filename or store}: "
                               f"{error.strerror or error}", hint="check the store's permissions and free space") from None


def _sweep(store: Path, keep: set[str], cutoff: float, report: GcReport) -> None:
    entries = list(_entries(store))
    if report.dry_run:
        for path, content_id in entries:
            _judge(path, content_id, keep, cutoff, report)
        return
    gc_lock = _open_lock(store / GC_LOCK_NAME)
    try:
        for start in range(0, len(entries), BATCH):
            fcntl.flock(gc_lock, fcntl.LOCK_EX)  # no put runs while a batch is judged and unlinked
            try:
                for path, content_id in entries[start:start + BATCH]:
                    _judge(path, content_id, keep, cutoff, report)
            finally:
                fcntl.flock(gc_lock, fcntl.LOCK_UN)
    finally:
        os.close(gc_lock)


def _judge(path: Path, content_id: str | None, keep: set[str], cutoff: float, report: GcReport) -> None:
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return
    young = status.st_mtime >= cutoff
    if content_id is not None and (content_id in keep or young):
        report.kept += 1
        report.kept_bytes += status.st_size
        report.young += content_id not in keep
        return
    if young:  # a temporary still being written
        return
    if not report.dry_run:
        try:
            os.unlink(path)
        except FileNotFoundError:
            return
    if content_id is None:
        report.temporaries += 1
    else:
        report.deleted += 1
        report.deleted_bytes += status.st_size
        report.deleted_ids.append(content_id)
