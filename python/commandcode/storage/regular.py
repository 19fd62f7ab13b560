"""Opening and reading files: `open_regular`, the one way commandcode opens a file.

Every file commandcode reads or writes — in the data dir or as an agent tool's target — is
opened by `open_regular`: `O_NONBLOCK | O_NOCTTY | O_CLOEXEC` (a FIFO, socket or device in its
place can never block the program), `O_NOFOLLOW` unless the caller follows a final symlink on
purpose, and an `fstat` of the opened descriptor that refuses anything but a regular file with
`NotRegularFileError` (an `OSError`, so every existing I/O error path handles it). `read_regular`
and `read_all` read what it opened, bounded when asked.
"""

import errno
import os
import stat

FILE_MODE = 0o600
"""The mode of every file commandcode creates (private); `durable.py` re-exports it."""


class NotRegularFileError(OSError):
    """The path names a folder, FIFO, socket or device where a regular file was expected."""


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symlink"))


def file_kind(mode: int) -> str:
    """What `st_mode` describes, as the error messages name it ("a FIFO", "a folder", ...)."""
    return next((kind for is_kind, kind in _KINDS if is_kind(mode)), "not a regular file")


def not_regular_error(path: str | os.PathLike[str], mode: int) -> "NotRegularFileError":
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
            raise not_regular_error(path, before.st_mode)
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
                raise not_regular_error(path, now) from None
        raise
    try:
        opened = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(opened):
            raise not_regular_error(path, opened)
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


def read_if_exists(path: str | os.PathLike[str], *, follow: bool = False, limit: int | None = None) -> bytes | None:
    """`read_regular(path, limit=limit)`, or `None` when nothing is there (a dangling link included).

    Raises:
        NotRegularFileError, OSError: as `open_regular`.
    """
    try:
        return read_regular(path, follow=follow, limit=limit)
    except FileNotFoundError:
        return None
