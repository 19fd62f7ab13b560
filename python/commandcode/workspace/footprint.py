"""The disk footprint of sessions: `commandcode sessions du` and the current session's `/status` line.

Per session: transcript bytes, sidecars (meta, checkpoints, share, legacy backups), the index
sidecar, the store objects its checkpoints reference — an object referenced by one session is that
session's, one referenced by several is counted once, under `shared` — the raw sha256 blobs of
`file-history/<sid>/` (the real CLI's, and ours with `checkpoints.compatibleBackups`: hard links
to one shared copy in `raw-objects/`), attributed the same way by inode, so a blob linked from
several sessions is counted once, under `shared_blobs` — and its scratchpad. Per project: the
sums and the archives. Sizes come from `stat`; the only sidecar read is the checkpoints file,
for the objects it names (bounded: `checkpoints.digests`), and a sidecar that is not a regular
file (a FIFO, a socket, a folder) is never opened: it is listed under `skipped`, marked, and the
report goes on. Then the data dir's total (every file under it, a file with several hard
links once, as `du` counts them) and what `sweep --dry-run` would free.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from ..catalog.listing import project_dirs, transcripts_in
from ..checkpoints.digests import checkpoint_references
from ..checkpoints.packed import packed_sizes
from ..config.paths import ARCHIVE_SUFFIX, archives_dir, data_dir, objects_dir
from ..errors import CheckpointError
from ..sessions.files import SessionFiles
from ..sessions.format import read_header_cwd
from ..storage.regular import file_kind
from .parts import index_part, sidecar_parts, size_of
from .scratchpad import folder_bytes, scratchpad_path

TOP_SESSIONS = 10


@dataclass
class SessionUsage:
    """One session's bytes by kind."""

    id: str
    project: str
    transcript: int = 0
    sidecars: int = 0
    index: int = 0
    objects: int = 0  # referenced by this session only
    shared_objects: int = 0  # referenced by this one and others (each counted once, in the totals apart)
    blobs: int = 0  # raw sha256 blobs (file-history) no other session links
    shared_blobs: int = 0  # raw blobs linked from this one and others
    scratchpad: int = 0
    references: set[str] = field(default_factory=set)
    blob_inodes: dict[tuple[int, int], int] = field(default_factory=dict)  # (device, inode) -> bytes
    skipped: list[str] = field(default_factory=list)  # "<path> (a FIFO)": not counted, not read

    @property
    def total(self) -> int:
        return self.transcript + self.sidecars + self.index + self.objects + self.blobs + self.scratchpad

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "project": self.project, "transcript": self.transcript, "sidecars": self.sidecars,
                "index": self.index, "objects": self.objects, "shared_objects": self.shared_objects,
                "blobs": self.blobs, "shared_blobs": self.shared_blobs, "scratchpad": self.scratchpad,
                "total": self.total, "skipped": list(self.skipped)}


@dataclass
class ProjectUsage:
    name: str
    sessions: list[SessionUsage]
    archives: int = 0
    archive_files: int = 0

    def total(self, kind: str) -> int:
        return int(sum(getattr(session, kind) for session in self.sessions))

    def to_json(self) -> dict[str, Any]:
        kinds = ("transcript", "sidecars", "index", "objects", "blobs", "scratchpad")
        return {"project": self.name, "sessions": len(self.sessions), **{kind: self.total(kind) for kind in kinds},
                "archives": self.archives, "archive_files": self.archive_files,
                "total": sum(self.total(kind) for kind in kinds) + self.archives}


def _object_size(object_id: str, packed: dict[str, int]) -> int:
    """An object's bytes: its file's, or its frame's in a pack (`packed`, `packed_sizes`)."""
    try:
        return os.lstat(os.path.join(objects_dir(), object_id[:2], object_id[2:])).st_size
    except OSError:
        return packed.get(object_id, 0)


def session_usage(files: SessionFiles) -> SessionUsage:
    """One session's bytes, its objects not yet split into own and shared."""
    usage = SessionUsage(files.session_id, os.path.basename(files.folder))
    usage.transcript = size_of([files.transcript])
    history = str(files.file_history)
    parts = sidecar_parts(files)
    usage.sidecars = size_of([path for path in parts if str(path.parent) != history])
    usage.blob_inodes = _inodes([path for path in parts if str(path.parent) == history])
    usage.index = size_of([index_part(files)])
    usage.skipped = _not_regular(files)
    try:
        usage.references = checkpoint_references(files.checkpoints)  # a huge file: bounded
    except CheckpointError:
        usage.references = set()
    cwd = read_header_cwd(files.sidecar_path(".jsonl"))
    pad = scratchpad_path(files.session_id, cwd) if cwd else None
    usage.scratchpad = folder_bytes(os.path.dirname(pad)) if pad and os.path.isdir(pad) else 0
    return usage


def _not_regular(files: SessionFiles) -> list[str]:
    """The session's sidecar names that hold something other than a regular file (a FIFO, a
    socket, a folder, a symlink): never opened, so the report cannot hang or fail on them."""
    try:
        names = sorted(os.listdir(files.folder))
    except OSError:
        return []
    marks = []
    for name in names:
        if not name.startswith(f"{files.session_id}.") or name == f"{files.session_id}.jsonl":
            continue
        try:
            mode = os.lstat(os.path.join(files.folder, name)).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            marks.append(f"{os.path.join(files.folder, name)} ({file_kind(mode)})")
    return marks


def _inodes(paths: list[Any]) -> dict[tuple[int, int], int]:
    found: dict[tuple[int, int], int] = {}
    for path in paths:
        try:
            status = os.lstat(path)
        except OSError:
            continue
        found[(status.st_dev, status.st_ino)] = status.st_size
    return found


def _split_objects(sessions: list[SessionUsage]) -> tuple[int, int]:
    """Attributes each object and each raw blob to its one session, or to `shared`; returns the
    shared bytes of each (every shared one counted once)."""
    counts: dict[str, int] = {}
    blob_counts: dict[tuple[int, int], int] = {}
    for usage in sessions:
        for object_id in usage.references:
            counts[object_id] = counts.get(object_id, 0) + 1
        for inode in usage.blob_inodes:
            blob_counts[inode] = blob_counts.get(inode, 0) + 1
    packed = packed_sizes()
    sizes = {object_id: _object_size(object_id, packed) for object_id in counts}
    shared: set[str] = set()
    shared_blobs: dict[tuple[int, int], int] = {}
    for usage in sessions:
        for object_id in usage.references:
            if counts[object_id] > 1:
                usage.shared_objects += sizes[object_id]
                shared.add(object_id)
            else:
                usage.objects += sizes[object_id]
        for inode, size in usage.blob_inodes.items():
            if blob_counts[inode] > 1:
                usage.shared_blobs += size
                shared_blobs[inode] = size
            else:
                usage.blobs += size
    return sum(sizes[object_id] for object_id in shared), sum(shared_blobs.values())


def tree_bytes(path: str) -> int:
    """The bytes of the regular files under `path`, a file with several hard links once (`du -sb`)."""
    return folder_bytes(path, links_once=True) if os.path.isdir(path) else 0


def footprint(cwd: str, *, all_projects: bool) -> dict[str, Any]:
    """The `sessions du` report (JSON-shaped). Objects are attributed across every project
    (sharing is global), shown for the projects asked for."""
    every = [session_usage(SessionFiles.for_transcript(path))
             for folder in project_dirs(all_projects=True, cwd=cwd) for path in sorted(transcripts_in(folder))]
    shared_bytes, shared_blob_bytes = _split_objects(every)
    wanted = {folder.name for folder in project_dirs(all_projects=all_projects, cwd=cwd)}
    projects: dict[str, ProjectUsage] = {}
    for usage in every:
        if usage.project in wanted:
            projects.setdefault(usage.project, ProjectUsage(usage.project, [])).sessions.append(usage)
    for name in wanted:
        folder = archives_dir() / name
        if folder.is_dir():
            archives = [entry for entry in folder.iterdir() if entry.name.endswith(ARCHIVE_SUFFIX)]
            project = projects.setdefault(name, ProjectUsage(name, []))
            project.archives, project.archive_files = size_of(archives), len(archives)
    shown = [usage for project in projects.values() for usage in project.sessions]
    skipped = [mark for usage in shown for mark in usage.skipped]
    top = sorted(shown, key=lambda usage: usage.total, reverse=True)[:TOP_SESSIONS]
    return {"projects": [projects[name].to_json() for name in sorted(projects)],
            "top_sessions": [usage.to_json() for usage in top],
            "shared_objects": shared_bytes, "shared_blobs": shared_blob_bytes,
            "store": tree_bytes(str(objects_dir())),
            "data_dir": str(data_dir()), "data_dir_total": tree_bytes(str(data_dir())), "skipped": skipped}


def status_line(files: SessionFiles) -> str:
    """The current session's footprint for `/status`, e.g. `disk: 1.2 MB transcript · 40.0 kB
    sidecars · 3.4 MB checkpoints · 12.0 kB scratchpad` (its store objects and raw blobs, shared
    ones included)."""
    usage = session_usage(files)
    packed = packed_sizes()
    checkpoints = sum(_object_size(object_id, packed) for object_id in usage.references) + \
        sum(usage.blob_inodes.values())
    parts = [f"{human(usage.transcript)} transcript", f"{human(usage.sidecars + usage.index)} sidecars",
             f"{human(checkpoints)} checkpoints"]
    if usage.scratchpad:
        parts.append(f"{human(usage.scratchpad)} scratchpad")
    return "disk: " + " · ".join(parts)


def human(size: int) -> str:
    """Bytes as people read them (decimal units, as `du -h --si`)."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} B"  # pragma: no cover
