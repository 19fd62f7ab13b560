"""A fork server for suites that run the CLI hundreds of times: `commandcode` runs forked from one
process that started Python and imported the CLI once (`tests/support/killable_cli.py --serve`),
so a run costs its own work, not an interpreter start-up and the imports (most of a short turn).

Each run is still a process of its own (environment, working directory, standard streams, exit
code, the kill and fail points of `killable_cli.py`); `run` returns what `subprocess.run` would.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers.locations import KILLABLE


class ForkServer:
    """One `killable_cli.py --serve` process; `run` forks a CLI run from it and waits for it."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.process = subprocess.Popen([sys.executable, str(KILLABLE), "--serve"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, cwd=scratch)
        self._pending = b""

    def run(self, args: list[str], cwd: Path, env: dict[str, str], *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """`python killable_cli.py ARGS` in `cwd` with exactly `env` (its `COMMANDCODE_TEST_*`
        settings apply; without them the run is `python -m commandcode ARGS`)."""
        assert self.process.stdin is not None
        out, err = self.scratch / "stdout", self.scratch / "stderr"
        request = {"args": args, "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err)}
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        pid = self._answer(timeout)["pid"]
        try:
            code = self._answer(timeout)["returncode"]
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)  # the server reaps it and answers
            self._answer(timeout)
            raise subprocess.TimeoutExpired(["commandcode", *args], timeout) from None
        return subprocess.CompletedProcess(["commandcode", *args], code, out.read_text(errors="replace"),
                                           err.read_text(errors="replace"))

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


__all__ = ["ForkServer", "fork_server"]
