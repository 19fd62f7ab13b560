"""Durable file-system writes: private folders, whole writes, atomic replacement, fsyncs.

Everything commandcode creates is private: folders 0700, files 0600. A file is replaced only
through a temporary file in the same folder that is written, fsynced and renamed over the
target, followed by an fsync of the folder, so a crash leaves either the old or the new file.
Every write of ours goes through `write_all`, which loops until the kernel took every byte (a
single `os.write` may take fewer, on a full pipe, a signal or a quota edge), and every file is
opened by `regular.open_regular` (never blocking on a FIFO, never through a planted link).
"""

import os
import stat
import time

from .regular import FILE_MODE, not_regular_error, open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["DIR_MODE", "FILE_MODE", "STALE_TEMPORARY_SECONDS", "atomic_write", "check_replaceable", "create_new_file",
           "ensure_dir", "finish_write", "fsync_dir", "open_for_write", "process_exists", "replace_file", "write_all"]

DIR_MODE = 0o700


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


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flushes a folder's entries (a rename or create inside it) to disk."""
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC)  # never a FIFO
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_all(descriptor: int, data: bytes) -> None:
    """Writes all of `data` to `descriptor`, however many `write` calls that takes."""
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]


def open_for_write(path: str | os.PathLike[str], *, exclusive: bool, mode: int = FILE_MODE) -> int:
    """A write descriptor on a regular file created at `path` (`exclusive`: it must not exist
    yet; else one there is truncated), opened by `open_regular` (never through a symlink)."""
    return open_regular(path, os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC), mode)


def told_of(target: str | os.PathLike[str], error: OSError) -> OSError:
    """`error`, met on a temporary file beside `target`, told of `target`: the path a user knows
    (a temporary file's name in an error line tells them nothing)."""
    return type(error)(error.errno, error.strerror, os.fspath(target))


def finish_write(descriptor: int, data: bytes) -> None:
    """Writes all of `data`, fsyncs and closes `descriptor` (closed also when that fails)."""
    try:
        write_all(descriptor, data)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def create_new_file(path: str | os.PathLike[str], data: bytes, *, mode: int = FILE_MODE,
                    remove_on_failure: bool = True) -> None:
    """Creates `path` (never replacing or following anything there) holding `data`, fsynced.

    A failure midway removes the partial file unless `remove_on_failure` is off (the caller
    then treats what reached disk as a torn tail).

    Raises:
        FileExistsError: something is at `path` already.
        OSError: the file could not be created or written.
    """
    descriptor = open_for_write(path, exclusive=True, mode=mode)
    try:
        finish_write(descriptor, data)
    except BaseException:
        if remove_on_failure:
            try:
                os.unlink(path)
            except OSError:
                pass
        raise


STALE_TEMPORARY_SECONDS = 60


def atomic_write(path: "Path", data: bytes, *, mode: int = FILE_MODE) -> None:
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
        raise not_regular_error(path, mode)


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


def is_replace_temporary(path: str) -> bool:
    """Whether `path` names a temp file of `replace_file` (`.<name>.<pid>.<nonce>.tmp`): there
    only while a tool writes, never a file of the user's to track (shell tracking skips them)."""
    name = os.path.basename(path)
    if not (name.startswith(".") and name.endswith(".tmp")):
        return False
    parts = name[1:-4].rsplit(".", 2)
    return (len(parts) == 3 and parts[0] != "" and parts[1].isdigit() and parts[1].isascii() and len(parts[2]) == 8
            and all(character in "0123456789abcdef" for character in parts[2]))


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
            write_all(descriptor, data)
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


def _remove_stale_temporaries(path: "Path") -> None:
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
            if not pid_text.isdigit() or process_exists(int(pid_text)):
                continue
            try:
                if time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMPORARY_SECONDS:
                    os.unlink(os.path.join(folder, name))
            except OSError:
                pass


def process_exists(pid: int) -> bool:
    """Whether `pid` may be a running process: ours, one that answers signal 0, or another
    user's (never taken for gone)."""
    if pid <= 0 or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process (or not a pid we can ask about): keep its file
    return True
