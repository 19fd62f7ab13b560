"""Runs the `commandcode` CLI with in-process kill points (test support only, never shipped).

    python tests/support/killable_cli.py ARGS...        # same as `python -m commandcode ARGS...`
    python tests/support/killable_cli.py --serve        # a fork server (`helpers.forked_cli`)

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
_count_file = ""
_fail_at = 0
_fill_up = False  # `:full`: from the N-th call on, calls that need space fail
_full = False
_FREES_SPACE = frozenset({"ftruncate", "unlink", "rename", "replace"})


def _configure() -> None:
    """Reads (and removes, so no child process inherits them) the kill, fail and count settings."""
    global _target, _torn, _count_file, _fail_at, _fill_up
    spec = os.environ.pop("COMMANDCODE_TEST_KILL_AT", "")
    _count_file = os.environ.pop("COMMANDCODE_TEST_COUNT_FILE", "")
    if spec:
        number, _, mode = spec.partition(":")
        _target = int(number)
        _torn = mode == "torn"
    fail_spec = os.environ.pop("COMMANDCODE_TEST_FAIL_AT", "")
    if fail_spec:
        number, _, mode = fail_spec.partition(":")
        _fail_at = int(number)
        _fill_up = mode == "full"


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


def arm() -> None:
    """Reads this process's kill, fail and count settings and puts the kill points in (the count
    is written at exit): what every script run with kill points does first."""
    _configure()
    _install()
    atexit.register(_report)


def main() -> None:
    arm()
    from commandcode.cli import main as cli_main

    sys.argv[0] = "commandcode"
    cli_main()


# --------------------------------------------------------------------------------------------
# A fork server: the interpreter start-up and the imports once, then a fork per run


_PRELOAD = ("commandcode.cli", "commandcode.cli.typer_app", "commandcode.agent.runtime")
"""What a headless turn imports (not the `commandcode.cli.run` submodule: importing it rebinds the
package's `run`, which `main()` calls)."""


def serve() -> None:
    """`killable_cli.py --serve`: reads one JSON request per line on stdin (`args`, `cwd`, `env`,
    `stdout` and `stderr` file paths, and `new_session`: in a session of its own), runs each in
    a child forked from this process (which has imported the CLI once), and answers two lines per
    request: the child's pid when it starts, and its return code as `subprocess` gives it (minus
    the signal number when it was killed) when it ends. A child is a whole new
    process to the CLI: its own environment, working directory, standard streams and exit; the
    kill, fail and count settings are read from its environment, as `main` reads them."""
    import importlib
    import json
    import threading

    _install()  # before the imports: a module that binds `os.write` at import binds the counting one
    for module in _PRELOAD:
        importlib.import_module(module)
    assert threading.active_count() == 1, "the fork server must fork a single-threaded process"
    answers = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        answers.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)  # never returns
        answers.write(json.dumps({"pid": pid}) + "\n")
        answers.flush()
        _, status = os.waitpid(pid, 0)
        answers.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
        answers.flush()


def _child(request: dict[str, object]) -> None:
    try:
        if request.get("new_session"):
            os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        for descriptor, path in ((1, request["stdout"]), (2, request["stderr"])):
            target = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, descriptor)
            os.close(target)
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - the child's whole life
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update(request["env"])  # type: ignore[call-overload]
        sys.argv = ["commandcode", *request["args"]]  # type: ignore[misc]
        global _count
        _count = 0  # the counting starts with the run, not with the server's imports
        _configure()
        atexit.register(_report)
        from commandcode.cli import main as cli_main

        cli_main()  # ends the process (os._exit)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        os._exit(70)  # only when the start-up above failed


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        main()
