"""The shell's `/resume` picker in a real pty over sessions written straight to disk
(`helpers.session_files.write_session`: with and without a meta sidecar, in two projects): it
lists this directory's sessions, Ctrl+A widens to every project, and keys typed right after
Ctrl+A (while the list reloads) all reach the filter, in the shell and in `sessions pick` under tmux.

The sessions are written with recent timestamps: the shell starts the daily auto-sweep once its
prompt is up (`launcher.start.start_auto_sweep`), which archives sessions whose last entry is
older than `cleanupPeriodDays` (30) and not renamed by the user. `write_session`'s default date
(2026-01-02) is older than that on a machine clock past February 2026, so a shell test over such
sessions sees them archived, the picker showing "0 session(s)" (issue #31's report), while
`sessions pick` (no sweep) still lists them."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from helpers.session_files import sid, write_session
from helpers.terminal import ESC, HANG_TIMEOUT, ShellSession, TmuxSession, needs_tmux, shell_session

pytestmark = pytest.mark.terminal

CTRL_A = "\x01"


def _recent(number: int) -> str:
    """A timestamp `number` minutes into the last hour: young enough for the auto-sweep to keep."""
    moment = datetime.now(UTC) - timedelta(hours=1) + timedelta(minutes=number)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _two_projects(workdir: Path, tmp_path: Path) -> None:
    """Two sessions here (one with a meta sidecar, one without), four in another project: three
    `task-N` ones (what a filter that lost the keys typed after Ctrl+A would show) and `winding`."""
    other = (tmp_path / "elsewhere" / "other-proj")
    other.mkdir(parents=True)
    other = other.resolve()
    write_session(workdir, sid(1), ["refactor the parser"], meta={"title": "Parser work"}, when=_recent(1))
    write_session(workdir, sid(2), ["write the docs about zeppelins"], when=_recent(2))
    for number in range(3, 6):
        write_session(other, sid(number), [f"task-{number - 2} wiring"], when=_recent(number))
    write_session(other, sid(6), ["a winding road"], meta={"title": "winding"}, when=_recent(6))


def _rows(screen: str) -> list[str]:
    return [line for line in screen.splitlines() if "msgs" in line]


def _filter_text(screen: str) -> str | None:
    """The filter box's text: the first line boxed in `▊ … ▎` alone (the rows below it share their
    line with the detail pane), or None while that box is not drawn."""
    for line in screen.splitlines():
        stripped = line.strip()
        if stripped.startswith("▊") and stripped.endswith("▎") and stripped.strip("▊▎ ▔▁"):
            return stripped.strip("▊▎ ")
    return None


def _only_winding(screen_of: Callable[[], str]) -> None:
    """Waits for the picker to settle on every project filtered by `winding`, then checks the rows.
    A frame can arrive in pieces, and one key short (`windin`) already leaves one row: the wait is
    for the whole filter as well as the count and the row, so every key typed after Ctrl+A must reach
    the filter, in order, or the wait fails with the last screen."""
    deadline = time.monotonic() + HANG_TIMEOUT
    while True:
        screen = screen_of()
        if ("1 session(s) in every project" in screen and len(_rows(screen)) == 1
                and _filter_text(screen) == "winding"):
            break
        assert time.monotonic() < deadline, f"the picker never settled on `winding` and one row:\n{screen}"
        time.sleep(0.05)
    assert "winding" in _rows(screen)[0], screen
    assert "Parser work" not in screen and "task-" not in screen, screen


def _shell_screen(shell: ShellSession) -> Callable[[], str]:
    def read() -> str:
        shell.pump()
        return shell.text()
    return read


def test_resume_lists_written_sessions_and_keys_after_ctrl_a_reach_the_filter(home: Path, workdir: Path,
                                                                               tmp_path: Path) -> None:
    _two_projects(workdir, tmp_path)
    shell = shell_session(workdir, home, columns=160, rows=40)
    try:
        shell.line("/resume")
        screen = shell.wait_screen("2 session(s) in this directory", "Parser work", "write the docs about zeppelins")
        assert "winding" not in screen and "task-1" not in screen, screen
        shell.child.send(CTRL_A + "winding")  # one write: the keys arrive while the list reloads
        _only_winding(_shell_screen(shell))
        shell.send(ESC)  # back at the prompt (pyte may leave Textual's last frame under it), nothing resumed
        shell.wait_screen(" 0 checkpoint(s)")
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()


@needs_tmux
def test_sessions_pick_under_tmux_keeps_keys_typed_right_after_ctrl_a(home: Path, workdir: Path,
                                                                     tmp_path: Path) -> None:
    _two_projects(workdir, tmp_path)
    tmux = TmuxSession(workdir, home, tmp_path / "tmux.sock", ["sessions", "pick"], columns=160, rows=40)
    try:
        screen = tmux.wait_screen("2 session(s) in this directory", "Parser work")
        assert "winding" not in screen, screen
        tmux.keys("C-a", *"winding")  # one tmux command: the keys arrive together, while every project loads
        _only_winding(tmux.text)
        tmux.keys("Escape")
        deadline = time.monotonic() + HANG_TIMEOUT
        while not tmux.dead():
            assert time.monotonic() < deadline, tmux.text()
            time.sleep(0.05)
    finally:
        tmux.close()
