"""Runs the `commandcode` CLI with in-process kill points (test support only, never shipped).

    python tests/support/killable_cli.py ARGS...        # same as `python -m commandcode ARGS...`

Environment:

- `COMMANDCODE_TEST_KILL_AT=N` (or `N:torn`): the process SIGKILLs itself at the N-th mutating
  file-system call made from Python (`os.write` to a regular file, `os.pwrite`, `os.fsync`,
  `os.fdatasync`, `os.ftruncate`, `os.replace`, `os.rename`, `os.link`, `os.unlink`, `os.mkdir`, `os.copy_file_range`,
  and `os.open` with `O_CREAT`). The kill lands just before the call, except with `:torn` on a
  write, where half the bytes are written first (a torn write, as a real SIGKILL can leave one).
- `COMMANDCODE_TEST_FAIL_AT=N` (or `N:full`): instead of a kill, the N-th such call fails with
  `ENOSPC` (nothing written). With `:full` the disk fills up there, as a real one does: a write
  at N is short (half its bytes land), then every later call that needs space (`write`,
  `pwrite`, `fsync`, `fdatasync`, `link`, `mkdir`, `os.open` with `O_CREAT`) fails with
  `ENOSPC`, while `ftruncate`, `unlink`, `rename` and `replace` still work.
- `COMMANDCODE_TEST_COUNT_FILE=PATH`: at exit, the number of such calls is written to PATH (the
  harness uses it to pick N).

Writes made by the native extension (object store, restores) are not counted: the crash harness
reaches those with random-time kills.
"""

from __future__ import annotations

import atexit
import errno
import os
import signal
import stat
import sys

_target = 0
_torn = False
_count = 0
_spec = os.environ.pop("COMMANDCODE_TEST_KILL_AT", "")
_count_file = os.environ.pop("COMMANDCODE_TEST_COUNT_FILE", "")
if _spec:
    number, _, mode = _spec.partition(":")
    _target = int(number)
    _torn = mode == "torn"
_fail_spec = os.environ.pop("COMMANDCODE_TEST_FAIL_AT", "")
_fail_at = 0
_fill_up = False  # `:full`: from the N-th call on, calls that need space fail
_full = False
if _fail_spec:
    number, _, mode = _fail_spec.partition(":")
    _fail_at = int(number)
    _fill_up = mode == "full"
_FREES_SPACE = frozenset({"ftruncate", "unlink", "rename", "replace"})


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _hit(name: str = "", size: int = 0) -> bool:
    """Counts one call; True when this call is the one to die at. Raises `ENOSPC` for a call
    that `COMMANDCODE_TEST_FAIL_AT` makes fail; returns False for a write there that is to be
    short (the disk fills up during it)."""
    global _count, _full
    _count += 1
    if _fail_at > 0:
        if _count == _fail_at and _fill_up:
            _full = True
            if name in ("write", "pwrite") and size > 1:
                return False  # the caller makes this write short
        if _count == _fail_at or (_full and name not in _FREES_SPACE):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return _target > 0 and _count == _target


def _short(count: int) -> bool:
    """Whether the write that `_hit` just counted is the one the disk fills up in."""
    return _fill_up and _count == _fail_at and count > 1


def _regular(descriptor: int) -> bool:
    try:
        return stat.S_ISREG(os.fstat(descriptor).st_mode)
    except OSError:
        return False


def _install() -> None:
    real = {name: getattr(os, name) for name in ("write", "pwrite", "fsync", "fdatasync", "ftruncate", "replace",
                                                 "rename", "link", "unlink", "mkdir", "open", "copy_file_range")}

    def write(descriptor: int, data: object) -> int:
        if not _regular(descriptor):
            return real["write"](descriptor, data)
        size = len(memoryview(data))  # type: ignore[arg-type]
        if _hit("write", size):
            view = memoryview(data)  # type: ignore[arg-type]
            if _torn and len(view) > 1:
                real["write"](descriptor, view[: len(view) // 2])
            _die()
        if _short(size):
            return real["write"](descriptor, memoryview(data)[: size // 2])  # type: ignore[arg-type]
        return real["write"](descriptor, data)

    def pwrite(descriptor: int, data: object, offset: int) -> int:
        size = len(memoryview(data))  # type: ignore[arg-type]
        if _hit("pwrite", size):
            view = memoryview(data)  # type: ignore[arg-type]
            if _torn and len(view) > 1:
                real["pwrite"](descriptor, view[: len(view) // 2], offset)
            _die()
        if _short(size):
            return real["pwrite"](descriptor, memoryview(data)[: size // 2], offset)  # type: ignore[arg-type]
        return real["pwrite"](descriptor, data, offset)

    def simple(name: str):  # type: ignore[no-untyped-def]
        function = real[name]

        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            if _hit(name):
                _die()
            return function(*args, **kwargs)

        wrapper.__name__ = name
        return wrapper

    def open_(path, flags, mode=0o777, *, dir_fd=None):  # type: ignore[no-untyped-def]
        if flags & os.O_CREAT and _hit("open"):
            _die()
        return real["open"](path, flags, mode, dir_fd=dir_fd)

    os.write = write  # type: ignore[assignment]
    os.pwrite = pwrite  # type: ignore[assignment]
    for name in ("fsync", "fdatasync", "ftruncate", "replace", "rename", "link", "unlink", "mkdir", "copy_file_range"):
        setattr(os, name, simple(name))
    os.open = open_  # type: ignore[assignment]


def _report() -> None:
    if _count_file:
        with open(_count_file, "w", encoding="ascii") as handle:
            handle.write(str(_count))


def main() -> None:
    _install()
    atexit.register(_report)
    from commandcode.cli import main as cli_main

    sys.argv[0] = "commandcode"
    cli_main()


if __name__ == "__main__":
    main()
