"""`commandcode sessions pick` in a real terminal (tmux): the picker paints the sessions, typing
filters them, Enter prints the picked session's id and directory; Escape prints nothing."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.cli import cli_env
from helpers.session_files import sid, write_session
from helpers.terminal import tmux as tmux_run

pytestmark = [pytest.mark.terminal,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


class Tmux:
    def __init__(self, tmp_path: Path) -> None:
        self.socket = str(tmp_path / "tmux.sock")

    def run(self, *args: str) -> str:
        return tmux_run(self.socket, *args)  # without the test process's COLUMNS/LINES (helpers/terminal.py)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "pick")

    def wait_for(self, *texts: str, timeout: float = 60) -> str:
        """Waits until one screen shows every one of `texts` (a frame arrives in pieces)."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if all(text in shown for text in texts):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"{texts!r} never appeared at once; the screen:\n{shown}")
            time.sleep(0.1)


def _start(tmux: Tmux, workdir: Path, home: Path) -> None:
    env = cli_env(home, TERM="xterm-256color")
    command = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items() if key.startswith(("COMMANDCODE_", "NO_COLOR", "PATH", "HOME")))
    tmux.run("new-session", "-d", "-s", "pick", "-x", "140", "-y", "40", "-c", str(workdir),
             f"env {command} {shlex.quote(sys.executable)} -m commandcode sessions pick; echo EXITED $?; sleep 600")


@pytest.fixture
def tmux(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = Tmux(tmp_path)
    yield server
    subprocess.run(["tmux", "-S", server.socket, "kill-server"], capture_output=True, timeout=30)
    if os.path.exists(server.socket):
        os.unlink(server.socket)


def test_pick_in_a_real_terminal(home: Path, workdir: Path, tmux: Tmux) -> None:
    write_session(workdir, sid(1), ["refactor the parser"], meta={"title": "Parser work"}, when="2026-01-01T00:00:00.000Z")
    write_session(workdir, sid(2), ["write the docs about zeppelins"], when="2026-01-02T00:00:00.000Z")
    _start(tmux, workdir, home)
    tmux.wait_for("2 session(s) in this directory", "Parser work", "write the docs")  # the count and its rows
    tmux.run("send-keys", "-t", "pick", "-l", "zeppel")
    tmux.wait_for("1 session(s) in this directory")
    tmux.run("send-keys", "-t", "pick", "Enter")
    done = tmux.wait_for("EXITED 0")
    assert sid(2) in done and str(workdir) in done and sid(1) not in done


def test_escape_leaves_without_picking(home: Path, workdir: Path, tmux: Tmux) -> None:
    write_session(workdir, sid(1), ["only one"])
    _start(tmux, workdir, home)
    tmux.wait_for("1 session(s) in this directory")
    tmux.run("send-keys", "-t", "pick", "Escape")
    done = tmux.wait_for("EXITED 0")
    assert sid(1) not in done

