"""The clipboard under a real tmux (`set -s set-clipboard on`): OSC 52 from a pane and
`tmux load-buffer -w -` both land in tmux's buffer (`show-buffer`), and the line says how."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.cli import wait_for

pytestmark = pytest.mark.terminal
SCRIPT = "import sys; from commandcode.present.clipboard import copy; print(copy(sys.argv[1]), flush=True)"


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[list[str]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/run installs it)")
    base = ["tmux", "-L", f"cc-{uuid.uuid4().hex[:8]}", "-f", "/dev/null"]
    subprocess.run([*base, "new-session", "-d", "-x", "80", "-y", "24", "cat"], check=True)
    subprocess.run([*base, "set", "-s", "set-clipboard", "on"], check=True)
    try:
        yield base
    finally:
        subprocess.run([*base, "kill-server"], check=False, capture_output=True)


def _copy_in_pane(tmux: list[str], tmp_path: Path, text: str, *, keep_tmux_env: bool) -> str:
    out = tmp_path / f"out-{uuid.uuid4().hex[:6]}"
    unset = "" if keep_tmux_env else "env -u TMUX "
    command = f"{unset}{sys.executable} -c '{SCRIPT}' '{text}' > {out}.tmp 2>&1; mv {out}.tmp {out}; sleep 60"
    subprocess.run([*tmux, "new-window", "-d", command], check=True)
    wait_for(out.exists, what="the copy in the tmux pane")
    return out.read_text().strip()


def _buffer(tmux: list[str]) -> str:
    return subprocess.run([*tmux, "show-buffer"], capture_output=True, text=True, check=False).stdout


def test_osc52_from_a_pane_reaches_the_tmux_buffer(tmux: list[str], tmp_path: Path) -> None:
    line = _copy_in_pane(tmux, tmp_path, "copied through osc 52", keep_tmux_env=False)
    assert line.startswith("copied") and "OSC 52" in line and "tmux buffer" not in line, line
    wait_for(lambda: _buffer(tmux) == "copied through osc 52", what="tmux's buffer")


def test_inside_tmux_load_buffer_too(tmux: list[str], tmp_path: Path) -> None:
    line = _copy_in_pane(tmux, tmp_path, "copied both ways", keep_tmux_env=True)
    assert "OSC 52" in line and "tmux buffer" in line, line
    assert _buffer(tmux) == "copied both ways"
