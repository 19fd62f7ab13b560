"""Session archives: one zstd-compressed file per swept session, restorable byte for byte.

`archives/<project folder>/<sid>.ccarchive` holds a session's files (transcript, sidecars, the
real CLI's `file-history/<sid>/` blobs, its hook audit log) and the store objects only it
referenced, then a JSON trailer and a fixed footer (docs/format.md §15):

    [frame]...[frame] [trailer JSON] [b"CCARCHV1" + trailer length, 8 bytes little-endian]

Each file is one zstd frame (level 10, with zstd's own checksum); each object is its store file
as it is (already one zstd frame). The trailer names every frame (offset, length), each file's
path relative to the data dir, size, sha256, mode and times (ns), each object's id, the shared
objects left in the store, and the sha256 of all the frames. The objects left in the store are
also listed in `<sid>.ccarchive.refs`, written before the archive, so the store's garbage
collection keeps them (`checkpoints/gc.py`).

Writing is temp file, fsync, rename, fsync folder: an archive exists whole or not at all.
`restore_archive` checks the footer, the trailer and the frames' sha256 before writing anything,
stages every file beside its target (`.<name>.ccrestore`), checks each file's sha256, sets its
mode and times, puts objects back into the store (checking their ids), and moves the transcript
into place last: a session reappears only complete. A truncated archive or one that fails its
checksum is refused with one line, and nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..checkpoints import store as backups
from ..config.paths import ARCHIVE_REFS_SUFFIX, ARCHIVE_SUFFIX, archives_dir, data_dir
from ..errors import CommandcodeError, UsageError
from ..storage.durable import atomic_write, ensure_dir, fsync_dir
from ..storage.ids import iso_now

_ARCHIVE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MAGIC = b"CCARCHV1"
FOOTER = struct.Struct("<8sQ")
VERSION = 1
LEVEL = 10
CHUNK = 1 << 20
MAX_TRAILER = 64 << 20
MAX_OBJECT = 256 << 20
STAGED_SUFFIX = ".ccrestore"


class ArchiveError(CommandcodeError):
    """An archive that cannot be read or restored (truncated, failing its checksum, a newer format)."""


@dataclass(frozen=True)
class ArchiveInfo:
    """A written archive: where, its size on disk, what it holds."""

    path: Path
    size: int
    files: int
    objects: int
    original_bytes: int


def archive_path(project_folder: str, session_id: str) -> Path:
    return archives_dir() / project_folder / f"{session_id}{ARCHIVE_SUFFIX}"


def refs_path(archive: Path) -> Path:
    return archive.with_name(archive.name[: -len(ARCHIVE_SUFFIX)] + ARCHIVE_REFS_SUFFIX)


class _Sink:
    """The archive being written: counts and hashes every byte."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle, self.offset, self.digest = handle, 0, hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.handle.write(data)
        self.digest.update(data)
        self.offset += len(data)
        return len(data)


def _compress_file(sink: _Sink, path: Path) -> dict[str, Any]:
    import zstandard

    status = os.lstat(path)
    start, digest, size = sink.offset, hashlib.sha256(), 0
    compressor = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True)
    writer = compressor.stream_writer(sink, closefd=False)  # type: ignore[arg-type]  # any object with write()
    with open(path, "rb") as source:
        while chunk := source.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
            writer.write(chunk)
    writer.flush(zstandard.FLUSH_FRAME)
    return {"path": os.path.relpath(path, data_dir()), "offset": start, "length": sink.offset - start, "size": size,
            "sha256": digest.hexdigest(), "mode": status.st_mode & 0o7777, "mtimeNs": status.st_mtime_ns,
            "atimeNs": status.st_atime_ns}


def write_archive(project_folder: str, session_id: str, parts: list[Path], own_objects: list[str],
                  shared_objects: list[str], store: backups.BackupStore) -> ArchiveInfo:
    """Writes the archive of one session (replacing an older one of the same session).

    Raises:
        BackupIntegrityError: an object it should hold is missing or corrupt (nothing written).
        OSError: a file could not be read or the archive written (the temp file is removed).
    """
    target = archive_path(project_folder, session_id)
    ensure_dir(target.parent)
    store.absorb_packs()  # the frames are copied from the objects' files: a packed object gets its own
    for object_id in own_objects:
        store.verify(object_id)
    atomic_write(refs_path(target), "".join(f"{object_id}\n" for object_id in sorted(shared_objects)).encode())
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as handle:
            sink = _Sink(handle)
            files = [_compress_file(sink, path) for path in parts]
            objects = []
            for object_id in own_objects:
                start = sink.offset
                sink.write(store.object_path(object_id).read_bytes())
                objects.append({"id": object_id, "offset": start, "length": sink.offset - start})
            trailer = json.dumps({"version": VERSION, "sessionId": session_id, "project": project_folder,
                                  "created": iso_now(), "files": files, "objects": objects,
                                  "storeObjects": sorted(shared_objects), "framesBytes": sink.offset,
                                  "framesSha256": sink.digest.hexdigest()}, separators=(",", ":")).encode()
            handle.write(trailer + FOOTER.pack(MAGIC, len(trailer)))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, target)
        fsync_dir(target.parent)
    except BaseException:
        temporary.unlink(missing_ok=True)
        if not target.exists():  # no archive: no references to keep for it
            refs_path(target).unlink(missing_ok=True)
        raise
    return ArchiveInfo(target, target.stat().st_size, len(files), len(objects), sum(item["size"] for item in files))


# --------------------------------------------------------------------------------------------
# Reading


def read_trailer(path: Path) -> dict[str, Any]:
    """The trailer of an archive, checked for shape (not yet against the frames).

    Raises:
        ArchiveError: missing footer (truncated), unreadable trailer, another format version.
    """
    shown = str(path)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < FOOTER.size:
                raise ArchiveError(f"{shown} is truncated ({size} bytes)", hint=_KEEP_HINT)
            handle.seek(size - FOOTER.size)
            magic, length = FOOTER.unpack(handle.read(FOOTER.size))
            if magic != MAGIC or length > min(MAX_TRAILER, size - FOOTER.size):
                raise ArchiveError(f"{shown} is truncated or not a session archive (no archive footer)", hint=_KEEP_HINT)
            handle.seek(size - FOOTER.size - length)
            trailer = json.loads(handle.read(length))
    except (ValueError, UnicodeDecodeError):
        raise ArchiveError(f"{shown}: the archive's table of contents is damaged", hint=_KEEP_HINT) from None
    if not isinstance(trailer, dict) or trailer.get("version") != VERSION:
        version = trailer.get("version") if isinstance(trailer, dict) else None
        raise ArchiveError(f"{shown}: archive format version {version!r} is not supported (this commandcode reads {VERSION})",
                           hint="restore it with a newer commandcode")
    frames = trailer.get("framesBytes")
    if not isinstance(frames, int) or frames != size - FOOTER.size - length or not _well_formed(trailer, frames):
        raise ArchiveError(f"{shown}: the archive's table of contents does not match its size (truncated?)", hint=_KEEP_HINT)
    return trailer


_KEEP_HINT = "the archive was left as it is; nothing was restored"


def _well_formed(trailer: dict[str, Any], frames: int) -> bool:
    items = trailer.get("files"), trailer.get("objects"), trailer.get("storeObjects")
    if not all(isinstance(item, list) for item in items) or not isinstance(trailer.get("sessionId"), str):
        return False
    for entry in [*trailer["files"], *trailer["objects"]]:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(key), int) and entry[key] >= 0
                                                  for key in ("offset", "length")):
            return False
        if entry["offset"] + entry["length"] > frames:
            return False
    for entry in trailer["files"]:
        path = entry.get("path")
        if not isinstance(path, str) or os.path.isabs(path) or ".." in path.split("/") or not all(
                isinstance(entry.get(key), int) for key in ("size", "mode", "mtimeNs", "atimeNs")):
            return False
    return all(isinstance(entry.get("id"), str) for entry in trailer["objects"])


def verify_archive(path: Path) -> dict[str, Any]:
    """The trailer, after checking the sha256 of every frame byte.

    Raises:
        ArchiveError: truncated, damaged, or failing its checksum.
    """
    trailer = read_trailer(path)
    digest, remaining = hashlib.sha256(), trailer["framesBytes"]
    with open(path, "rb") as handle:
        while remaining:
            chunk = handle.read(min(CHUNK, remaining))
            if not chunk:
                break
            digest.update(chunk)
            remaining -= len(chunk)
    if remaining or digest.hexdigest() != trailer.get("framesSha256"):
        raise ArchiveError(f"{path} fails its checksum: the archive is damaged", hint=_KEEP_HINT)
    return trailer


def _frame(path: Path, entry: dict[str, Any]) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(entry["offset"])
        return handle.read(entry["length"])


def _extract(archive: Path, entry: dict[str, Any], target: Path) -> Path:
    """Decompresses one file's frame beside its target, checks it, sets mode and times."""
    import zstandard

    staged = target.with_name(f".{target.name}{STAGED_SUFFIX}")
    ensure_dir(target.parent)
    digest, size = hashlib.sha256(), 0
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(_frame(archive, entry))
        with open(staged, "wb") as out:
            while chunk := reader.read(CHUNK):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
    except zstandard.ZstdError as error:
        staged.unlink(missing_ok=True)
        raise ArchiveError(f"{archive}: {entry['path']} does not decompress ({error})", hint=_KEEP_HINT) from None
    if size != entry["size"] or digest.hexdigest() != entry.get("sha256"):
        staged.unlink(missing_ok=True)
        raise ArchiveError(f"{archive}: {entry['path']} fails its checksum", hint=_KEEP_HINT)
    os.chmod(staged, entry["mode"])
    os.utime(staged, ns=(entry["atimeNs"], entry["mtimeNs"]))
    return staged


def restore_archive(archive: Path, store: backups.BackupStore | None = None) -> dict[str, Any]:
    """Puts an archived session back exactly (bytes, modes, times), then deletes the archive.
    Returns its trailer.

    Raises:
        ArchiveError: damaged or truncated (nothing written), or the session exists again with
            other bytes.
    """
    import zstandard

    trailer = verify_archive(archive)
    store = store if store is not None else backups.BackupStore()
    root = data_dir()
    targets = [(entry, root / entry["path"]) for entry in trailer["files"]]
    transcripts = [item for item in targets if item[1].name == f"{trailer['sessionId']}.jsonl"]
    if any(target.exists() for _, target in transcripts):
        if _already_restored(transcripts):
            _recreate_blobs(trailer, transcripts, store)  # a kill may have come before it
            _drop(archive)
            return trailer
        raise ArchiveError(f"session {trailer['sessionId']} exists again; the archive was not restored over it",
                           hint="delete or move that session first (the archive is kept)")
    for entry in trailer["objects"]:
        data = zstandard.ZstdDecompressor().decompress(_frame(archive, entry), max_output_size=MAX_OBJECT)
        if store.put_bytes(data) != entry["id"]:
            raise ArchiveError(f"{archive}: object {entry['id']} fails its checksum", hint=_KEEP_HINT)
    ordered = [item for item in targets if item not in transcripts] + transcripts  # the transcript last
    staged: list[tuple[Path, Path, dict[str, Any]]] = []
    try:
        for entry, target in ordered:
            staged.append((_extract(archive, entry, target), target, entry))
    except BaseException:  # a damaged frame, a full disk: nothing of the session appears
        for temporary, _, _ in staged:
            temporary.unlink(missing_ok=True)
        raise
    for temporary, target, entry in staged:
        os.replace(temporary, target)
        os.utime(target, ns=(entry["atimeNs"], entry["mtimeNs"]))
        fsync_dir(target.parent)
    _recreate_blobs(trailer, transcripts, store)
    _drop(archive)
    return trailer


def _recreate_blobs(trailer: dict[str, Any], transcripts: list[tuple[dict[str, Any], Path]],
                    store: backups.BackupStore) -> None:
    """The raw blobs the real CLI had cleaned up before the session was archived, made again from
    our store (`checkpoints/blob_rule.py`; when the settings of the session's folder, its header's
    `cwd`, keep compatible backups, blake3-only items get theirs too). The records themselves come
    back exactly as archived: the manager's first write of the session converts those items."""
    from ..checkpoints.blob_rule import enforce_file
    from ..sessions.format import read_header_cwd

    for _, transcript in transcripts:
        checkpoints = transcript.with_name(f"{trailer['sessionId']}.checkpoints.jsonl")
        cwd = read_header_cwd(transcript)
        enforce_file(checkpoints, str(trailer["sessionId"]), cwd=Path(cwd) if cwd else None, store=store,
                     rewrite=False)


def _already_restored(transcripts: list[tuple[dict[str, Any], Path]]) -> bool:
    """Whether a crash came after the transcript was put back (it holds the archived bytes)."""
    for entry, target in transcripts:
        digest = hashlib.sha256()
        try:
            with open(target, "rb") as handle:
                while chunk := handle.read(CHUNK):
                    digest.update(chunk)
        except OSError:
            return False
        if digest.hexdigest() != entry.get("sha256"):
            return False
    return True


def _drop(archive: Path) -> None:
    archive.unlink(missing_ok=True)
    refs_path(archive).unlink(missing_ok=True)
    fsync_dir(archive.parent)


def find_archive(session_id: str) -> Path | None:
    """The archive of a session id (or unique id prefix), in any project."""
    if not _ARCHIVE_ID.match(session_id):
        raise UsageError(f"{session_id!r} is not a session id", hint="see `commandcode sweep --list-archives`")
    folder = archives_dir()
    if not folder.is_dir():
        return None
    found = sorted(folder.glob(f"*/{session_id}*{ARCHIVE_SUFFIX}"))
    exact = [path for path in found if path.name == f"{session_id}{ARCHIVE_SUFFIX}"]
    if exact or len(found) == 1:
        return (exact or found)[0]
    if found:
        raise CommandcodeError(f"{len(found)} archived sessions start with {session_id!r}",
                               hint="give more of the session id")
    return None


def list_archives() -> list[Path]:
    folder = archives_dir()
    return sorted(folder.glob(f"*/*{ARCHIVE_SUFFIX}")) if folder.is_dir() else []
