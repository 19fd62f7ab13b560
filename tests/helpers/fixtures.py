"""Every shared fixture of the suite, defined once; `tests/conftest.py` loads this module as a
pytest plugin. (Fixtures that only one test file needs stay in that file.)

- `home`: the test's private data dir, the one home fixture;
- `workdir`, `project`: a working directory for the commands under test;
- `umask_022`: the test runs under umask 022;
- `cli_in_home`: `commandcode` as a subprocess in the test's environment, returning a tuple;
- `here`: a project folder (a git root) that is the current directory, for in-process `AgentSession` tests;
- `openai_stub`: a running `helpers.openai_stub.OpenAIStub` with `providers.json` for `local/...` in `home`.
- (autouse) the `helpers.sse.Viewer` threads a test started are stopped after it, and their errors fail it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

CliResult = tuple[int, str, str]
CliInHome = Callable[..., CliResult]


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist's workers export COLUMNS=80 and LINES=24; every terminal size a test sees is
    # the one it sets up (a pty, tmux, Pilot), never one inherited from the runner.
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)
    config.addinivalue_line(
        "markers", "home_on_tmpfs: the `home` fixture's data dir is on tmpfs (/dev/shm), where fsync is free")


@pytest.fixture(autouse=True)
def _viewers_stopped() -> Iterator[None]:
    """Stops the `helpers.sse.Viewer` threads a test started, and fails that test with any error
    one of them met (a thread's error would otherwise be a warning printed under a later test)."""
    yield
    sse = sys.modules.get("helpers.sse")
    if sse is not None:
        errors = sse.stop_all()
        if errors:
            pytest.fail("\n".join(errors), pytrace=False)


@pytest.fixture
def home(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The test's private `COMMANDCODE_HOME`, NOT yet created (commandcode creates it on its first
    write, as for a new user; a test that needs it first makes it), with the index sidecar off
    (`COMMANDCODE_INDEX=off`), `NO_COLOR=1` and the suite's scratchpad base
    (`helpers.cli.SCRATCHPAD_BASE`). Its parent folder exists.

    Under `@pytest.mark.home_on_tmpfs` it lives on tmpfs (`/dev/shm`), where fsync is free: for
    tests that make hundreds or thousands of durable writes and are about counts or interleaving,
    not durability."""
    on_tmpfs = request.node.get_closest_marker("home_on_tmpfs") is not None
    if on_tmpfs:
        base = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
        folder = Path(tempfile.mkdtemp(prefix="commandcode-test-", dir=base))
    else:
        folder = tmp_path / "home"
        folder.mkdir()
    data = folder / ".commandcode"
    monkeypatch.setenv("COMMANDCODE_HOME", str(data))
    monkeypatch.setenv("COMMANDCODE_INDEX", "off")
    monkeypatch.setenv("NO_COLOR", "1")
    from helpers.cli import SCRATCHPAD_BASE  # scratchpads of in-process sessions too: not the machine's /tmp

    monkeypatch.setenv("COMMANDCODE_SCRATCHPAD_BASE", SCRATCHPAD_BASE)
    try:
        yield data
    finally:
        if on_tmpfs:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The working directory of the commands under test (resolved: it is what getcwd reports)."""
    folder = tmp_path / "work" / "proj"
    folder.mkdir(parents=True)
    return folder.resolve()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder (the session's working directory)."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def here(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder that is the current directory (with a `.git` entry, so it is its own
    project root for the settings layers), with `home` as the data dir."""
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder.resolve()


@pytest.fixture
def openai_stub(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The stub OpenAI-compatible server on 127.0.0.1 (`helpers.openai_stub`), with
    `providers.json` naming it provider `local` (models `stub-model`, `stub-model-2`), its key in
    `$STUB_API_KEY` (`STUB_KEY`; subprocesses inherit it) and a 20 s provider timeout."""
    from .openai_stub import STUB_KEY, OpenAIStub, write_providers

    monkeypatch.setenv("STUB_API_KEY", STUB_KEY)
    monkeypatch.setenv("COMMANDCODE_PROVIDER_TIMEOUT", "20")
    with OpenAIStub() as stub:
        write_providers(home, stub.url)
        yield stub


@pytest.fixture
def project_here(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder made the current directory, with `home` as the data dir: for
    in-process `AgentSession` tests, which resolve sessions and settings from the current
    directory (a test module names it `project` with a one-line fixture)."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def umask_022() -> Iterator[None]:
    """Runs the test (and the subprocesses it starts) under umask 022."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture
def cli_in_home(home: Path) -> CliInHome:
    """`cli_in_home(args, cwd)` runs `python -m commandcode *args` in `cwd` with the test's
    environment (so with `home`) and returns `(exit code, stdout, stderr)`. (`helpers.cli.run_cli`
    is the plain function that takes the data dir and returns the `CompletedProcess`.)"""

    def run(args: Sequence[str], cwd: Path | str, *, timeout: float = 300) -> CliResult:
        completed = subprocess.run(
            [sys.executable, "-m", "commandcode", *args],
            cwd=cwd,
            env={**os.environ, "COLUMNS": "200"},
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        return (completed.returncode, completed.stdout.decode("utf-8", errors="surrogateescape"),
                completed.stderr.decode("utf-8", errors="surrogateescape"))

    return run


from helpers.claude_real import claude_home  # noqa: E402,F401  (sessions the real Claude Code wrote)
from helpers.npm_programs import npm_programs  # noqa: E402,F401  (the real npm programs, `npm` marker)
from helpers.pi_real import pi_files  # noqa: E402,F401  (sessions pi's own code wrote)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A PostgreSQL cluster for the whole run (per xdist worker): `helpers.postgres.Cluster`, on a
    Unix socket in a temporary folder, stopped at the end (the share service's tests)."""
    from helpers.postgres import cluster

    with cluster() as made:
        yield made
