"""Runs the `commandcode` CLI with in-process kill points (test support only, never shipped).

    python tests/support/killable_cli.py ARGS...        # same as `python -m commandcode ARGS...`

Environment:

- `COMMANDCODE_TEST_KILL_AT=N` (or `N:torn`): the process SIGKILLs itself at the N-th mutating
  file-system call made from Python (`os.write` to a regular file, `os.pwrite`, `os.fsync`,
  `os.fdatasync`, `os.ftruncate`, `os.replace`, `os.rename`, `os.link`, `os.unlink`, `os.mkdir`,
  and `os.open` with `O_CREAT`). The kill lands just before the call, except with `:torn` on a
  write, where half the bytes are written first (a torn write, as a real SIGKILL can leave one).
- `COMMANDCODE_TEST_COUNT_FILE=PATH`: at exit, the number of such calls is written to PATH (the
  harness uses it to pick N).

Writes made by the native extension (object store, restores) are not counted: the crash harness
reaches those with random-time kills.
"""

from __future__ import annotations

import atexit
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


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _hit() -> bool:
    """Counts one call; True when this call is the one to die at."""
    global _count
    _count += 1
    return _target > 0 and _count == _target


def _regular(descriptor: int) -> bool:
    try:
        return stat.S_ISREG(os.fstat(descriptor).st_mode)
    except OSError:
        return False


def _install() -> None:
    real = {name: getattr(os, name) for name in ("write", "pwrite", "fsync", "fdatasync", "ftruncate", "replace",
                                                 "rename", "link", "unlink", "mkdir", "open")}

    def write(descriptor: int, data: object) -> int:
        if not _regular(descriptor):
            return real["write"](descriptor, data)
        if _hit():
            view = memoryview(data)  # type: ignore[arg-type]
            if _torn and len(view) > 1:
                real["write"](descriptor, view[: len(view) // 2])
            _die()
        return real["write"](descriptor, data)

    def pwrite(descriptor: int, data: object, offset: int) -> int:
        if _hit():
            view = memoryview(data)  # type: ignore[arg-type]
            if _torn and len(view) > 1:
                real["pwrite"](descriptor, view[: len(view) // 2], offset)
            _die()
        return real["pwrite"](descriptor, data, offset)

    def simple(name: str):  # type: ignore[no-untyped-def]
        function = real[name]

        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            if _hit():
                _die()
            return function(*args, **kwargs)

        wrapper.__name__ = name
        return wrapper

    def open_(path, flags, mode=0o777, *, dir_fd=None):  # type: ignore[no-untyped-def]
        if flags & os.O_CREAT and _hit():
            _die()
        return real["open"](path, flags, mode, dir_fd=dir_fd)

    os.write = write  # type: ignore[assignment]
    os.pwrite = pwrite  # type: ignore[assignment]
    for name in ("fsync", "fdatasync", "ftruncate", "replace", "rename", "link", "unlink", "mkdir"):
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
