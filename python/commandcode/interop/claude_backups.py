"""Claude Code's file-history backups, read without trusting them: names, targets and bytes.

A checkpoint of a Claude Code transcript names each tracked file by its `trackingPath` (relative
to the session's original cwd, or absolute: Claude Code's own rule) and its backup by
`backupFileName`, a file in `file-history/<session id>/`. The transcript is input, not truth:

- `backup_problem` / `read_backup`: a name must have Claude Code's own shape (16 or 64 hex
  digits, `@v`, a version: the sha256 of the real path and a counter), so it can only name a
  file directly in the session's folder (never `../…`), and that folder must not be a symlink;
  the file is opened by `storage.regular.open_regular` (no-follow, non-blocking), so a symlink
  to a file elsewhere, a FIFO, a socket or a device is refused instead of read or waited on.
- `tracked_target`: the file a backup restores, as Claude Code's `--rewind-files` resolves it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..storage.regular import file_kind, open_regular, read_all

BACKUP_NAME = re.compile(r"[0-9a-f]{16}(?:[0-9a-f]{48})?@v\d+")
"""Claude Code's own check of a backup name (`nJn` in its bundle)."""


class BackupRefused(Exception):
    """A backup that is not read; `str()` says why, as a warning line finishes it."""


def tracked_target(cwd: str, tracking_path: str) -> str:
    """The absolute path Claude Code restores `tracking_path` to: as is when absolute, else
    joined to the session's original cwd (never to the backup's `realParentDir`, which is the
    resolved folder of the file, kept by Claude Code only to check that it did not change)."""
    return os.path.normpath(tracking_path if os.path.isabs(tracking_path) else os.path.join(cwd, tracking_path))


def _kind_problem(path: Path, wanted: Callable[[int], bool], wrong: Callable[[str], str]) -> str | None:
    """Why `path` (by `lstat`) is not of the kind `wanted` tests (`None`: it is); `wrong` words
    the mismatch from what is there ("a FIFO", ...)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "is missing"
    except OSError as error:
        return f"cannot be read ({path}: {error.strerror or error})"
    return None if wanted(mode) else wrong(file_kind(mode))


def _folder_problem(folder: Path) -> str | None:
    return _kind_problem(folder, stat.S_ISDIR, lambda kind: f"is not read: {folder} is {kind}, not the session's folder")


def _name_problem(name: Any) -> str | None:
    if isinstance(name, str) and BACKUP_NAME.fullmatch(name):
        return None
    return "is not a Claude Code backup name (16 or 64 hex digits, @v, a number), so it was not read"


def backup_problem(folder: Path, name: Any) -> str | None:
    """Why the backup `name` in `folder` cannot be read (`None`: it looks readable); by `lstat`
    only, never opening it."""
    return _name_problem(name) or _folder_problem(folder) or \
        _kind_problem(folder / str(name), stat.S_ISREG, lambda kind: f"is {kind}, not a regular file, so it was not read")


def read_backup(folder: Path, name: Any) -> tuple[bytes, int]:
    """The bytes and permission bits of backup `name` in the session's `folder`.

    Raises:
        BackupRefused: see the module docstring; the message finishes "the backup X of Y ...".
    """
    problem = _name_problem(name) or _folder_problem(folder)
    if problem:
        raise BackupRefused(problem)
    try:
        descriptor = open_regular(folder / str(name))
    except FileNotFoundError:
        raise BackupRefused("is missing") from None
    except OSError as error:
        raise BackupRefused(f"is {error.strerror or error}, so it was not read") from None
    try:
        mode = os.fstat(descriptor).st_mode & 0o7777
        return read_all(descriptor), mode
    except OSError as error:
        raise BackupRefused(f"cannot be read: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
