"""`commandcode sessions pick` with more sessions than its first paint reads, in a real terminal
(tmux): the first screenful appears, then the whole list (its count), and a session far below
the first screenful can be found by typing and resumed with Enter."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from commandcode.ui.screens.picker import FIRST_PAINT
from helpers.session_files import sid, write_session
from helpers.terminal import TmuxSession

pytestmark = [pytest.mark.terminal,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

COUNT = FIRST_PAINT + 40


def test_the_whole_list_arrives_after_the_first_screenful(home: Path, workdir: Path, tmp_path: Path) -> None:
    for number in range(1, COUNT + 1):
        write_session(workdir, sid(number), [f"task {number:03d} of the list"],
                      when=f"2026-01-01T{number // 60:02d}:{number % 60:02d}:00.000Z")
    session = TmuxSession(workdir, home, tmp_path / "tmux.sock", ["sessions", "pick"], columns=140, rows=40)
    try:
        session.wait_screen(f"{COUNT} session(s) in this directory")
        session.tmux("send-keys", "-t", "cc", "-l", "task 002 ")
        session.wait_screen("1 session(s) in this directory")
        session.keys("Enter")
        session.wait_screen(sid(2))
        assert sid(1) not in session.text()
    finally:
        session.close()
