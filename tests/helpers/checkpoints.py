"""Shared helpers for the backup, checkpoint and rewind tests: fresh session files, tree
snapshots (bytes and modes) and size-limited tmpfs mounts. (The fixtures `home`, on tmpfs with
`@pytest.mark.home_on_tmpfs`, and `project` come from `helpers.fixtures`.)"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from commandcode.config.paths import project_dir
from commandcode.sessions.files import SessionFiles
from helpers.locations import SAMPLES_HOME

SAMPLES = SAMPLES_HOME / ".commandcode"
SAMPLE_SESSION = "1ccb4627-5286-46c5-84a9-ce35adae899d"
SAMPLE_CWD = "/home/dev/proj"


def new_session_files(cwd: Path) -> SessionFiles:
    """The files of a fresh session in `cwd`'s project folder (nothing written yet)."""
    return SessionFiles(project_dir(cwd), str(uuid.uuid4()))


Tree = dict[str, tuple[str, bytes, int]]


def lstat_walk(root: Path, *, skip: tuple[str, ...] = ()) -> Iterator[tuple[str, str, os.stat_result]]:
    """(relative path, path, lstat) of every entry under `root`, folders and FIFOs too, symlinks
    never followed; folders named in `skip` are left out with everything in them."""
    for folder, folders, names in os.walk(root):
        folders[:] = [name for name in folders if name not in skip]
        for name in [*folders, *names]:
            path = os.path.join(folder, name)
            yield os.path.relpath(path, root), path, os.lstat(path)


def lstat_tree(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under `root` (folders and FIFOs too; symlinks never followed; `.git` left
    out): relative path → ("file", bytes, mode), ("symlink", target), ("fifo"|"socket"|"folder",
    mode), ("device", rdev)."""
    import stat

    found: dict[str, tuple[object, ...]] = {}
    for relative, path, status in lstat_walk(root, skip=(".git",)):
        if stat.S_ISLNK(status.st_mode):
            found[relative] = ("symlink", os.readlink(path))
        elif stat.S_ISDIR(status.st_mode):
            found[relative] = ("folder", stat.S_IMODE(status.st_mode))
        elif stat.S_ISFIFO(status.st_mode):
            found[relative] = ("fifo", stat.S_IMODE(status.st_mode))
        elif stat.S_ISSOCK(status.st_mode):
            found[relative] = ("socket", stat.S_IMODE(status.st_mode))
        elif stat.S_ISCHR(status.st_mode) or stat.S_ISBLK(status.st_mode):
            found[relative] = ("device", status.st_rdev)
        else:
            found[relative] = ("file", Path(path).read_bytes(), stat.S_IMODE(status.st_mode))
    return found


def snapshot(root: Path) -> Tree:
    """Every file and symlink under `root`: relative path → (kind, bytes or link text, mode)."""
    out: Tree = {}
    for folder, folders, names in os.walk(root):
        folders.sort()
        for name in sorted(names + [entry for entry in folders if os.path.islink(os.path.join(folder, entry))]):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            status = os.lstat(path)
            if os.path.islink(path):
                out[relative] = ("link", os.readlink(path).encode(), 0)
            else:
                with open(path, "rb") as handle:
                    out[relative] = ("file", handle.read(), status.st_mode & 0o7777)
    return out


def write(path: Path, data: bytes | str, mode: int | None = None) -> Path:
    """Writes a file (creating parents) and sets its mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    if mode is not None:
        path.chmod(mode)
    return path


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str = "2m") -> Iterator[Path]:
    """Mounts a size-limited tmpfs at `where`; skips the test when mounting is not permitted."""
    where.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None:
        pytest.skip("no mount command on this machine")
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, text=True
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({result.stderr.strip() or 'not permitted'})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False, capture_output=True)


@contextlib.contextmanager
def read_only_tmpfs(where: Path, files: dict[str, bytes]) -> Iterator[Path]:
    """A tmpfs holding `files`, remounted read-only (writes fail with EROFS, even for root)."""
    with small_tmpfs(where, "4m") as mount:
        for name, data in files.items():
            write(mount / name, data)
        result = subprocess.run(["mount", "-o", "remount,ro", str(mount)], capture_output=True, text=True)
        if result.returncode != 0:
            pytest.skip(f"cannot remount read-only ({result.stderr.strip()})")
        yield mount


def fill_disk(mount: Path) -> Path:
    """Fills the file system to the last byte; returns the filler file (which may be empty when
    the disk was full already)."""
    filler = mount / f"filler{len(list(mount.glob('filler*')))}"
    try:
        descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        return filler
    try:
        for size in (1 << 16, 1 << 12, 1 << 9, 1):
            while True:
                try:
                    if os.write(descriptor, b"\0" * size) < size:
                        break
                except OSError:
                    break
    finally:
        os.close(descriptor)
    return filler


def store_ids(checkpoints_file: Path) -> set[str]:
    """The store objects a checkpoints file names (a compatible backup's in its `blake3` key)."""
    from commandcode.checkpoints.records import read_checkpoints

    return {item.store_object for record in read_checkpoints(checkpoints_file) for item in record.files
            if item.store_object}
