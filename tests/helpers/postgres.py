"""A PostgreSQL cluster of its own for the share service's tests: Debian's server binaries
(`/usr/lib/postgresql/*/bin`), `initdb` in a temporary folder, listening only on a Unix socket
there, stopped and removed at the end. PostgreSQL refuses to run as root: as root, the folder
belongs to the `postgres` system user and every server command runs as that user (`setpriv`);
as anyone else, they run directly. Also: the replicas of the service (`commandcode share serve
--store URL --port 0`) as subprocesses, found by the address they print."""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers.cli import cli_env


def _bindir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise AssertionError("PostgreSQL's server is not installed (apt-get install postgresql; .ci/run does)")
    return Path(found[-1]).parent


class Cluster:
    """A running cluster: `url` for psycopg and the service; `stop()`, `start()`, `sql()`."""

    def __init__(self) -> None:
        self.bindir = _bindir()
        self.folder = Path(tempfile.mkdtemp(prefix="ccpg-", dir="/tmp"))  # a socket path is at most 107 bytes
        self.data = self.folder / "data"
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self.prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups"]
        self.url = f"postgresql://postgres@/postgres?host={self.folder}"
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8",
                  "--locale=C")
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        completed = subprocess.run([*self.prefix, str(self.bindir / tool), *args], capture_output=True, text=True,
                                   timeout=120, cwd=self.folder, stdin=subprocess.DEVNULL)
        assert completed.returncode == 0, f"{tool} failed: {completed.stdout}\n{completed.stderr}"

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-w", "-t", "60", "-o",
                  f"-k {self.folder} -c listen_addresses='' -c fsync=off -c max_connections=300", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute(statement)  # type: ignore[arg-type]

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


@contextmanager
def cluster() -> Iterator[Cluster]:
    made = Cluster()
    try:
        yield made
    finally:
        made.remove()


class Replica:
    """One `commandcode share serve --store URL` process and its port."""

    def __init__(self, url: str, data: Path, cwd: Path, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "commandcode", "share", "serve", "--store", url,
                                         "--port", "0", *args], cwd=cwd, env=cli_env(data), text=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert match, f"the service did not start: {line}{self.process.stderr.read() if not match else ''}"
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"
        self.errors: list[str] = []
        self._reader = threading.Thread(target=self._read_errors, daemon=True)
        self._reader.start()

    def _read_errors(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:  # drained, so a chatty replica never blocks on its pipe
            self.errors.append(line)

    def stop(self) -> str:
        """Stops it (SIGTERM); what it wrote on stderr after its first line."""
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=30)
        self._reader.join(timeout=30)
        return "".join(self.errors)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)


@contextmanager
def replicas(url: str, data: Path, cwd: Path, count: int, *args: str) -> Iterator[list[Replica]]:
    started: list[Replica] = []
    try:
        for _ in range(count):
            started.append(Replica(url, data, cwd, *args))
        yield started
    finally:
        for replica in started:
            replica.stop()


def token(url: str, data: Path, cwd: Path, user: str) -> str:
    completed = subprocess.run([sys.executable, "-m", "commandcode", "share", "token", "create", user, "--store", url],
                               cwd=cwd, env=cli_env(data), capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()
