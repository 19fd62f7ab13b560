"""Shared pytest fixtures: an isolated data dir and a runner for the real CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

CliResult = tuple[int, str, str]
CliRunner = Callable[..., CliResult]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private `COMMANDCODE_HOME` for one test, with the index sidecar switched off."""
    data = tmp_path / "home" / ".commandcode"
    data.mkdir(parents=True)
    monkeypatch.setenv("COMMANDCODE_HOME", str(data))
    monkeypatch.setenv("COMMANDCODE_INDEX", "off")
    monkeypatch.setenv("NO_COLOR", "1")
    return data


@pytest.fixture
def run_cli(home: Path) -> CliRunner:
    """`run_cli(args, cwd)` runs `python -m commandcode *args` in `cwd` with the test's environment
    and returns `(exit code, stdout, stderr)`."""

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
