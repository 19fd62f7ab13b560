"""A headless run's reply and warnings, when they go to no terminal: written as they are, without
loading rich (its import and console cost a `-p` run more than the rest of its output path)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.cli import cli_env


def _headless(arguments: list[str], cwd: Path, data: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "commandcode", *arguments], cwd=cwd,
                          env=cli_env(data, **extra), capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def _imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def _said(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if not line.startswith("import time:")]


def test_a_piped_reply_is_the_reply_with_its_tabs_and_no_rich(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = _headless(["-p", "a\tb  [bold]c[/] \\x"], work, tmp_path / "data")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Offline model reply. You said: a\tb  [bold]c[/] \\x\n"  # rich expanded the tab
    assert not {name for name in _imported(done.stderr) if name == "rich" or name.startswith("rich.")}


def test_a_piped_warning_is_one_plain_line_and_no_rich(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = _headless(["-p", "hello", "--no-session"], work, tmp_path / "data")
    assert done.returncode == 0, done.stderr
    assert _said(done.stderr) == ["warning: --no-session: this turn's edits are not checkpointed; no rewind can undo them"]
    assert "rich" not in _imported(done.stderr)


def test_forced_colour_still_goes_through_rich(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = _headless(["-p", "hello", "--no-session"], work, tmp_path / "data", FORCE_COLOR="1")
    assert done.returncode == 0, done.stderr
    assert "rich" in _imported(done.stderr)
    assert any("\x1b[" in line and "--no-session" in line for line in _said(done.stderr))
