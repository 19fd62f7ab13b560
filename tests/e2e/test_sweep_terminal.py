"""`commandcode sweep` in a real terminal (a pty): a rich progress bar while it works, then the
summary of what it freed; piped, neither bar nor escape codes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers.cli import cli_env, run_cli
from helpers.workspace import age_session, make_session

pexpect = pytest.importorskip("pexpect")


@pytest.mark.terminal
def test_progress_bar_then_summary(home: Path, workdir: Path) -> None:
    sessions = [make_session(home, workdir, f"turn {number}") for number in range(3)]
    for transcript in sessions:
        age_session(transcript, 40)
    env = {**cli_env(home), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(sys.executable, ["-m", "commandcode", "sweep", "--archive"], cwd=str(workdir), env=env,
                          timeout=120)
    child.expect(pexpect.EOF)
    child.close()
    raw = child.before.decode("utf-8", "replace")
    assert child.exitstatus == 0, raw
    assert "sweeping" in raw and "3/3" in raw, raw  # the bar, with its count
    assert "archived 3 sessions; freed" in raw
    assert all(not path.exists() for path in sessions)


def test_piped_output_has_no_bar(home: Path, workdir: Path) -> None:
    age_session(make_session(home, workdir), 40)
    completed = run_cli(["sweep"], workdir, home)
    assert completed.returncode == 0
    assert "sweeping" not in completed.stderr and "\x1b" not in completed.stdout + completed.stderr
    assert "deleted 1 session; freed" in completed.stdout
