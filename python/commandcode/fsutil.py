"""Durable file-system primitives: private folders, atomic replacement, directory fsync, and
the one way commandcode opens a file (`open_regular`).

Everything commandcode creates is private: folders 0700, files 0600. A file is replaced only
through a temporary file in the same folder that is written, fsynced and renamed over the
target, followed by an fsync of the folder, so a crash leaves either the old or the new file.

Every file commandcode reads or writes — in the data dir or as an agent tool's target — is
opened by `open_regular`: `O_NONBLOCK | O_NOCTTY | O_CLOEXEC` (a FIFO, socket or device in its
place can never block the program), `O_NOFOLLOW` unless the caller follows a final symlink on
purpose, and an `fstat` of the opened descriptor that refuses anything but a regular file with
`NotRegularFileError` (an `OSError`, so every existing I/O error path handles it).
"""

from __future__ import annotations

import errno
import os
import stat
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


class NotRegularFileError(OSError):
    """The path names a folder, FIFO, socket or device where a regular file was expected."""


def file_kind(mode: int) -> str:
    """What `st_mode` describes, as the error messages name it ("a FIFO", "a folder", ...)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def _not_regular(path: str | os.PathLike[str], mode: int) -> NotRegularFileError:
    kind = file_kind(mode)
    return NotRegularFileError(errno.EINVAL, f"{kind}, not a regular file" if kind.startswith("a ") else kind,
                               os.fspath(path))


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = FILE_MODE, *,
                 follow: bool = False) -> int:
    """Opens `path` as a regular file and returns the descriptor (the caller closes it).

    `flags` are the access flags (`O_RDONLY`, `O_WRONLY | O_CREAT | O_EXCL`, ...); this adds
    `O_NONBLOCK | O_NOCTTY | O_CLOEXEC`, and `O_NOFOLLOW` unless `follow`. An existing path is
    checked with `stat` before the open (a device is not even opened) and the descriptor with
    `fstat` after it (the path may have been swapped meanwhile). On a regular file `O_NONBLOCK`
    changes nothing.

    Raises:
        FileNotFoundError: nothing is there (and `O_CREAT` was not asked for).
        NotRegularFileError: a folder, FIFO, socket or device is there.
        OSError: any other failure; `ELOOP` for a final symlink when not `follow`.
    """
    try:
        before = os.stat(path, follow_symlinks=follow)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        if stat.S_ISLNK(before.st_mode):
            raise OSError(errno.ELOOP, "a symlink (never followed)", os.fspath(path))
        if not stat.S_ISREG(before.st_mode):
            raise _not_regular(path, before.st_mode)
    extra = os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        descriptor = os.open(path, flags | extra, mode)
    except OSError as error:
        if error.errno in (errno.ENXIO, errno.EISDIR):  # a socket, a FIFO with no reader, a folder
            try:
                now = os.stat(path, follow_symlinks=follow).st_mode
            except OSError:
                raise error from None
            if not stat.S_ISREG(now):
                raise _not_regular(path, now) from None
        raise
    try:
        opened = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(opened):
            raise _not_regular(path, opened)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def read_regular(path: str | os.PathLike[str], *, limit: int | None = None, follow: bool = False) -> bytes:
    """The bytes of the regular file at `path` (at most `limit + 1` of them when `limit` is set,
    so a caller sees that the file is longer than the bound without reading it all).

    Raises:
        FileNotFoundError, NotRegularFileError, OSError: as `open_regular`.
    """
    descriptor = open_regular(path, follow=follow)
    try:
        return read_all(descriptor, limit=limit)
    finally:
        os.close(descriptor)


def read_all(descriptor: int, *, limit: int | None = None) -> bytes:
    """Reads `descriptor` from its offset to the end (or to `limit + 1` bytes)."""
    chunks: list[bytes] = []
    total = 0
    while limit is None or total <= limit:
        want = 1 << 20 if limit is None else min(1 << 20, limit + 1 - total)
        chunk = os.read(descriptor, want)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def ensure_dir(path: str | os.PathLike[str]) -> None:
    """Creates `path` and missing parents with mode 0700.

    Every folder created here gets 0700, parents included (`Path.mkdir(parents=True)` would
    give new parents the umask default). Folders that already exist keep their mode. Works on
    strings (no `pathlib`), so the warm open of a session can create its index folder cheaply.
    """
    target = os.fspath(path)
    missing: list[str] = []
    current = target
    while not os.path.exists(current) and os.path.dirname(current) != current:
        missing.append(current)
        current = os.path.dirname(current)
    for folder in reversed(missing[1:]):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:  # created meanwhile by someone else
            pass
    try:
        os.mkdir(target, DIR_MODE)
    except FileExistsError:
        if not os.path.isdir(target):  # a file (or a dangling link) is in the way
            raise


def fsync_dir(path: Path) -> None:
    """Flushes a folder's entries (a rename or create inside it) to disk."""
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC)  # never a FIFO
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


STALE_TEMPORARY_SECONDS = 60


def atomic_write(path: Path, data: bytes, *, mode: int = FILE_MODE) -> None:
    """Replaces `path` with `data` atomically and durably (temp file, fsync, rename, fsync dir).

    The temp file is `<name>.<pid>.tmp` beside the target, the real CLI's naming, and is removed
    if anything fails before the rename. One left by a writer that was killed before its rename
    is removed by the next successful write (see `_remove_stale_temporaries`). A symlink at
    `path` is replaced (never written through); a folder, FIFO, socket or device is refused with
    `NotRegularFileError` and left as it is.
    """
    check_replaceable(path)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    _write_and_rename(temporary, path, data, os.O_TRUNC, mode, None)
    _remove_stale_temporaries(path)


def check_replaceable(path: str | os.PathLike[str]) -> None:
    """Raises `NotRegularFileError` when something other than a regular file or a symlink is at
    `path`: a rename over `path` replaces a file or a link (never what it points to), but leaves a
    folder, FIFO, socket or device that someone put there as it is."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode) and not stat.S_ISLNK(mode):
        raise _not_regular(path, mode)


def replace_file(path: str | os.PathLike[str], data: bytes, *, like: os.stat_result | None) -> None:
    """Replaces the user's file `path` with `data` atomically, keeping the mode and owner of
    `like` (the replaced file's `stat`; `None` for a new file, which gets `0666 & ~umask`).

    The temp file `.<name>.<pid>.<nonce>.tmp` is created exclusively beside the target (never an
    existing file of the user's), and removed if anything fails: the target then holds exactly
    what it held before. A hard-linked target is replaced by a new file, so its other names keep
    the old bytes (a rewind restores files the same way). A folder, FIFO, socket or device at
    `path` is refused (`NotRegularFileError`) and left as it is.
    """
    target = os.fspath(path)
    check_replaceable(target)
    folder, name = os.path.split(target)
    temporary = os.path.join(folder, f".{name[:200]}.{os.getpid()}.{time.monotonic_ns() & 0xFFFFFFFF:08x}.tmp")
    if like is None:
        umask = os.umask(0)
        os.umask(umask)
        _write_and_rename(temporary, target, data, os.O_EXCL, 0o666 & ~umask, None)
    else:
        _write_and_rename(temporary, target, data, os.O_EXCL, stat.S_IMODE(like.st_mode), like)


def _write_and_rename(temporary: str | os.PathLike[str], path: str | os.PathLike[str], data: bytes, create: int,
                      mode: int, owner: os.stat_result | None) -> None:
    """Writes `data` to `temporary` (created with `O_CREAT | create`), gives it `mode` (and the
    owner of `owner`, where allowed), fsyncs it, renames it over `path` and fsyncs the folder."""
    descriptor = open_regular(temporary, os.O_WRONLY | os.O_CREAT | create, mode)
    try:
        try:
            if owner is not None:
                os.fchmod(descriptor, mode)  # the umask narrowed the create mode
                if (owner.st_uid, owner.st_gid) != (os.geteuid(), os.getegid()):
                    try:
                        os.fchown(descriptor, owner.st_uid, owner.st_gid)
                        os.fchmod(descriptor, mode)  # chown clears set-id bits
                    except PermissionError:
                        pass  # not ours to give away: the file becomes ours, like any editor's save
            view = memoryview(data)
            while view:
                written = os.write(descriptor, view)
                view = view[written:]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    fsync_dir(os.path.dirname(os.fspath(path)) or ".")


def _remove_stale_temporaries(path: Path) -> None:
    """Deletes `<name>.<pid>.tmp` files beside `path` whose writer is gone: the pid names no
    process and the file is over a minute old (a writer in another pid namespace is still given
    time to finish). Only that exact naming is touched; `unlink` never follows a link."""
    prefix, folder = path.name + ".", os.fspath(path.parent)
    try:
        entries = os.scandir(folder)
    except OSError:
        return
    with entries:
        for entry in entries:
            name = entry.name
            pid_text = name[len(prefix):-len(".tmp")] if name.startswith(prefix) and name.endswith(".tmp") else ""
            if not pid_text.isdigit() or _process_exists(int(pid_text)):
                continue
            try:
                if time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMPORARY_SECONDS:
                    os.unlink(os.path.join(folder, name))
            except OSError:
                pass


def _process_exists(pid: int) -> bool:
    if pid <= 0 or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process (or not a pid we can ask about): keep its file
    return True


def read_text_if_exists(path: Path) -> str | None:
    """The regular file's text, or `None` when it does not exist.

    Raises:
        NotRegularFileError, OSError: as `open_regular`.
    """
    try:
        return read_regular(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
