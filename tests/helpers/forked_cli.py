"""A fork server for the suite's CLI runs: `commandcode` runs forked from one process that started
Python and imported the CLI once (`tests/support/killable_cli.py --serve`), so a run costs its own
work, not an interpreter start-up and the imports (most of a short command).

Each run is still a process of its own (environment, working directory, standard streams, exit
code, session, the kill and fail points of `killable_cli.py`); `run` returns what `subprocess.run`
would. `shared()` lends the one server of a test process, to which `helpers.cli.run_cli` sends
its runs; a suite that needs a server of its own (the failed-append matrix) takes `fork_server()`.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers.locations import KILLABLE


class ForkServer:
    """One `killable_cli.py --serve` process; `run` forks a CLI run from it and waits for it."""

    def __init__(self, scratch: Path, env: dict[str, str] | None = None) -> None:
        """`env`: the server's own environment (what the interpreter reads at start-up, such as
        `PYTHONUNBUFFERED`, comes from it; each run's environment is its own)."""
        self.scratch = scratch
        self.process = subprocess.Popen([sys.executable, str(KILLABLE), "--serve"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, cwd=scratch, env=env)
        self._pending = b""

    def run(self, args: list[str], cwd: Path, env: dict[str, str], *, timeout: float = 120,
            new_session: bool = False) -> subprocess.CompletedProcess[str]:
        """`python killable_cli.py ARGS` in `cwd` with exactly `env` (its `COMMANDCODE_TEST_*`
        settings apply; without them the run is `python -m commandcode ARGS`); `new_session`: in
        a session of its own (`start_new_session`), so with no controlling terminal."""
        completed = self.run_bytes(args, cwd, env, timeout=timeout, new_session=new_session)
        return subprocess.CompletedProcess(completed.args, completed.returncode,
                                           text(completed.stdout), text(completed.stderr))

    def run_bytes(self, args: list[str], cwd: Path, env: dict[str, str], *, timeout: float = 120,
                  new_session: bool = False) -> subprocess.CompletedProcess[bytes]:
        """`run`, with the standard streams as bytes."""
        assert self.process.stdin is not None
        out, err = self.scratch / "stdout", self.scratch / "stderr"
        request = {"args": args, "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err),
                   "new_session": new_session}
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        pid = self._answer(timeout)["pid"]
        try:
            code = self._answer(timeout)["returncode"]
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)  # the server reaps it and answers
            self._answer(timeout)
            raise subprocess.TimeoutExpired(["commandcode", *args], timeout) from None
        return subprocess.CompletedProcess(["commandcode", *args], code, out.read_bytes(), err.read_bytes())

    def _answer(self, timeout: float) -> dict[str, int]:
        """The server's next line (read unbuffered, so `select` sees what is left)."""
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        while b"\n" not in self._pending:
            ready, _, _ = select.select([descriptor], [], [], timeout)
            if not ready:
                raise TimeoutError
            chunk = os.read(descriptor, 4096)
            assert chunk, "the fork server exited"
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        answer: dict[str, int] = json.loads(line)
        return answer

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def text(data: bytes) -> str:
    """What `subprocess.run(..., text=True)` makes of a stream (universal newlines)."""
    return data.decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")


_shared: ForkServer | None = None
_shared_pid = 0
_shared_lock = threading.Lock()


@contextmanager
def shared(env: dict[str, str]) -> Iterator[ForkServer | None]:
    """This test process's own server (started on first use, with `env` as its environment, and
    stopped at exit), or None while another thread of the test is using it: the caller then runs
    a plain process, so that runs a test starts side by side still run side by side."""
    global _shared, _shared_pid
    if not _shared_lock.acquire(blocking=False):
        yield None
        return
    try:
        if _shared is None or _shared_pid != os.getpid() or _shared.process.poll() is not None:
            _shared, _shared_pid = ForkServer(Path(tempfile.mkdtemp(prefix="commandcode-fork-server-")), env), os.getpid()
            atexit.register(_close_shared, _shared)
        yield _shared
    finally:
        _shared_lock.release()


def _close_shared(server: ForkServer) -> None:
    server.close()
    shutil.rmtree(server.scratch, ignore_errors=True)


@contextmanager
def fork_server() -> Iterator[ForkServer]:
    with tempfile.TemporaryDirectory(prefix="commandcode-fork-server-") as scratch:
        server = ForkServer(Path(scratch))
        try:
            yield server
        finally:
            server.close()
            if server.process.stdout is not None:
                server.process.stdout.close()


__all__ = ["ForkServer", "fork_server", "shared", "text"]
