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
from helpers.terminal import tmux_env
from helpers.trees import branched_session

pytestmark = [pytest.mark.terminal,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")]


def _tmux(*args: str) -> str:
    """tmux without the test process's COLUMNS/LINES, which would fix every pane at 80x24 (helpers/terminal.py)."""
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True, timeout=30, env=tmux_env()).stdout


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

        def drawn() -> bool:  # the whole first frame, not a part of it: every row checked below is there
            text = screen()
            return all(part in text for part in (ids["a5"], "Jump", ids["u2"], "second prompt on branch A",
                                                  "filter: default"))

        wait_for(drawn, what="the tree screen")
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


@pytest.mark.parametrize("size", [(80, 24), (140, 40), (200, 60)])
def test_the_navigator_opens_on_the_current_entry_at_every_size(home: Path, workdir: Path, tmp_path: Path,
                                                                size: tuple[int, int]) -> None:
    """A session longer than the screen opens scrolled to the current entry (◆, the leaf): at
    140x40 and 80x24 it opened at the top with the cursor below the last row; the title fits
    80 columns with a long name."""
    from commandcode.agent.runtime import AgentSession

    with AgentSession.start(workdir) as agent:
        agent.rename("a rather long session name that would not fit on one line")
        for number in range(40):
            agent.turns.run_turn(f"prompt number {number}")
    leaf = open_session(agent.files.transcript).leaf_id
    socket = str(tmp_path / "tmux.sock")
    env = cli_env(home, TERM="xterm-256color")
    exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items()
                       if key.startswith(("COMMANDCODE_", "NO_COLOR", "PYTHON", "PATH", "HOME")))
    command = f"cd {shlex.quote(str(workdir))} && env {exports} {shlex.quote(sys.executable)} -m commandcode tree {agent.session_id}"
    columns, rows = size
    # A shell first, the navigator once the window has its size (tmux may settle a new session's
    # size after starting its command, and the screen would be drawn for the size before).
    _tmux("-S", socket, "new-session", "-d", "-x", str(columns), "-y", str(rows), "sh")
    try:
        def screen() -> str:
            return _tmux("-S", socket, "capture-pane", "-p")

        wait_for(lambda: _tmux("-S", socket, "display", "-p", "#{pane_width}x#{pane_height}").strip() == f"{columns}x{rows}",
                 what="the window's size")
        _tmux("-S", socket, "send-keys", f"clear; {command}", "Enter")

        def on_the_leaf(text: str) -> bool:
            return (f"◆ {leaf}" in text and "prompt number 39" in text and "Jump" in text
                    and "81 entries · filter: default" in (text.splitlines() or [""])[0])

        wait_for(lambda: on_the_leaf(screen()), what="the tree screen on the current entry")
        time.sleep(0.5)  # a late layout must not scroll it away again
        text = screen()
        assert on_the_leaf(text), text
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=30)
