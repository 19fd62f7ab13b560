"""The daily background sweep the shell starts (`workspace.retire.run.maybe_auto_sweep`): at most
once a day, in its own process, archiving unless the settings chose deletion; and bad settings."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from commandcode.workspace.retire.run import maybe_auto_sweep, sweep_dir
from helpers.cli import assert_error_lines, cli_env, run_cli, wait_for
from helpers.workspace import age_session, make_session


@pytest.fixture
def child_env(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The background process inherits this environment: the test's data dir and scratchpads."""
    for key, value in cli_env(home).items():
        monkeypatch.setenv(key, value)


def test_once_a_day_and_it_archives(home: Path, workdir: Path, child_env: None) -> None:
    old = make_session(home, workdir)
    age_session(old, 40)
    assert maybe_auto_sweep(workdir)
    wait_for(lambda: not old.exists() and any((home / "archives").rglob("*.ccarchive")), what="the background sweep")
    assert not maybe_auto_sweep(workdir), "a second start the same day runs nothing"
    stamp = sweep_dir() / "last-auto-sweep"
    long_ago = time.time() - 2 * 86400
    os.utime(stamp, (long_ago, long_ago))
    assert maybe_auto_sweep(workdir)


def test_deletion_only_when_the_settings_say_so(home: Path, workdir: Path, child_env: None) -> None:
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"cleanupMode": "delete"}))
    old = make_session(home, workdir)
    age_session(old, 40)
    assert maybe_auto_sweep(workdir)
    wait_for(lambda: not old.exists(), what="the background sweep")
    wait_for(lambda: not list((home / "sweep").glob("*.json")), what="the sweep to finish")
    assert not (home / "archives").exists() or not any((home / "archives").rglob("*.ccarchive"))


def test_malformed_settings_are_one_line_and_nothing_is_swept(home: Path, workdir: Path) -> None:
    old = make_session(home, workdir)
    age_session(old, 40)
    (home / "settings.json").write_text('{"cleanupPeriodDays": 3,,}')
    for args in (["sweep"], ["sweep", "--archive", "--dry-run"], ["sessions", "du"]):
        assert_error_lines(run_cli(args, workdir, home), error_contains="settings.json:1:")
    assert old.exists() and (home / "settings.json").read_text() == '{"cleanupPeriodDays": 3,,}'


def test_the_session_the_shell_shows_is_left_alone(home: Path, workdir: Path, child_env: None) -> None:
    """A shell that resumed an old session holds no lock until its first turn: the sweep it starts
    is told which session is on screen, and archives only the others (it used to archive the one
    just resumed, and the next `-r` of it found nothing)."""
    shown, other = make_session(home, workdir), make_session(home, workdir)
    for transcript in (shown, other):
        age_session(transcript, 40)
    assert maybe_auto_sweep(workdir, keep=[shown.stem])
    wait_for(lambda: not other.exists() and any((home / "archives").rglob("*.ccarchive")), what="the background sweep")
    wait_for(lambda: not list((home / "sweep").glob("*.json")), what="the sweep to finish")
    assert shown.exists()
