"""`commandcode tree REF` in a real terminal (tmux): the navigator draws every branch, keys move the
cursor, Enter jumps with the branch-summary offer, and the jump is in the transcript afterwards."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from commandcode.sessions.reader import open_session
from helpers.cli import cli_env, wait_for
from helpers.trees import branched_session

pytestmark = [pytest.mark.terminal,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")]


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True, timeout=30).stdout


def test_the_navigator_jumps_in_a_real_terminal(home: Path, workdir: Path, tmp_path: Path) -> None:
    files, ids = branched_session(workdir)
    socket = str(tmp_path / "tmux.sock")
    env = cli_env(home, TERM="xterm-256color")
    exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items() if key.startswith(("COMMANDCODE_", "NO_COLOR", "PYTHON", "PATH", "HOME")))
    done = tmp_path / "done.txt"
    command = (f"cd {shlex.quote(str(workdir))} && env {exports} {shlex.quote(sys.executable)} -m commandcode tree "
               f"{files.session_id} > {shlex.quote(str(tmp_path / 'out.txt'))}; echo $? > {shlex.quote(str(done))}")
    _tmux("-S", socket, "new-session", "-d", "-x", "140", "-y", "40", "sh", "-c", command)
    try:
        def screen() -> str:
            return _tmux("-S", socket, "capture-pane", "-p")

        wait_for(lambda: ids["a5"] in screen() and "Jump here" in screen(), what="the tree screen")
        text = screen()
        assert ids["u2"] in text and "second prompt on branch A" in text and "filter: default" in text
        _tmux("-S", socket, "send-keys", "Home")
        time.sleep(0.3)
        _tmux("-S", socket, "send-keys", "Enter")
        wait_for(lambda: "Summarize them?" in screen(), what="the summary offer")
        _tmux("-S", socket, "send-keys", "Enter")  # the focused button: keep (branchSummary defaults on)
        wait_for(done.exists, what="the navigator to exit")
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=30)
    assert done.read_text().strip() == "0"
    assert f"moved to entry {ids['u1']}" in (tmp_path / "out.txt").read_text()
    session = open_session(files.transcript)
    leaf = session.read_entries([session.leaf_id])[0]
    assert leaf["type"] == "branch_summary" and leaf["parentId"] == ids["u1"] and leaf["fromId"] == ids["a5"]
