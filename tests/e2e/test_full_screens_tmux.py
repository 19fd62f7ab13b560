"""The full-screen views at the sizes users have, in real tmux windows: `tree`, the rewind menu
and the resume picker at 80x20, 80x24, 140x40 and 200x60 open with the current entry on screen,
drawn at the window's real size (the footer on its last row; see helpers/terminal.py for why
every earlier tmux check ran at 80x24), the tree's header whole, key hints never cut, one line
per rewind row, the rewind preview beside the actions, and no `^p palette` hint anywhere.

An 80x20 check is real here: the pane is asked for its size, and the view must end on row 20."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commandcode.sessions.reader import open_session
from helpers.cli import wait_for
from helpers.session_files import sid, write_session
from helpers.terminal import TmuxSession, needs_tmux

pytestmark = [pytest.mark.terminal, pytest.mark.slow, needs_tmux]  # twelve windows: about 40 s
SIZES = [(80, 20), (80, 24), (140, 40), (200, 60)]
LONG_NAME = "a rather long session name that would not fit on one line"


@pytest.fixture
def long_session(home: Path, workdir: Path) -> tuple[str, str, int]:
    """A named session of 41 turns, its first and last editing a file, the last prompt long:
    (id, leaf id, entry count)."""
    from commandcode.agent.runtime import AgentSession

    with AgentSession.start(workdir) as agent:
        agent.rename(LONG_NAME)
        agent.turns.run_turn("call write_file " + json.dumps({"file_path": "a.txt", "content": "one\n"}))
        for number in range(39):
            agent.turns.run_turn(f"prompt number {number}")
        agent.turns.run_turn("call write_file " + json.dumps({"file_path": "a.txt", "content": "two " * 80}))
    session = open_session(agent.files.transcript)
    return agent.session_id, str(session.leaf_id), session.entry_count


def _open(workdir: Path, home: Path, tmp_path: Path, args: list[str], size: tuple[int, int], ready: str) -> TmuxSession:
    view = TmuxSession(workdir, home, tmp_path / f"{args[0]}-{size[0]}x{size[1]}.sock", args,
                       columns=size[0], rows=size[1])
    view.wait_screen(ready)
    assert view.size() == size
    return view


def _lines(view: TmuxSession, rows: int) -> list[str]:
    lines = view.text().split("\n")[:rows]
    return lines + [""] * (rows - len(lines))


@pytest.mark.parametrize("size", SIZES, ids=[f"{c}x{r}" for c, r in SIZES])
def test_tree_opens_on_the_current_entry_with_its_header_whole(home: Path, workdir: Path, tmp_path: Path,
                                                               long_session: tuple[str, str, int],
                                                               size: tuple[int, int]) -> None:
    session_id, leaf, count = long_session
    view = _open(workdir, home, tmp_path, ["tree", session_id], size, "Jump")
    try:
        wait_for(lambda: f"◆ {leaf}" in view.text() and "Jump" in _lines(view, size[1])[-1],
                 what="the current entry on screen, the footer on the last row")
        lines = _lines(view, size[1])
        assert lines[0].rstrip().endswith(f"{count} entries · filter: default"), lines[0]
        assert lines[0].startswith(f" {session_id[:8]} · a rather"), lines[0]
        assert "Jump" in lines[-1], lines  # the footer on the window's last row: drawn at its real size
        assert "^p" not in view.text() and "palette" not in view.text()
        view.keys("Home")
        wait_for(lambda: f"◆ {leaf}" not in view.text(), what="Home to scroll to the top")
        view.keys("End")
        wait_for(lambda: f"◆ {leaf}" in view.text(), what="End to come back to the current entry")
        view.keys("q")
        wait_for(view.dead, what="the tree to close")
    finally:
        view.close()


@pytest.mark.parametrize("size", SIZES, ids=[f"{c}x{r}" for c, r in SIZES])
def test_rewind_menu_keeps_rows_on_one_line_and_the_preview_beside_the_actions(
        home: Path, workdir: Path, tmp_path: Path, long_session: tuple[str, str, int], size: tuple[int, int]) -> None:
    session_id = long_session[0]
    view = _open(workdir, home, tmp_path, ["rewind", session_id], size, "Enter: choose what")
    try:
        wait_for(lambda: "Back" in (shown := _lines(view, size[1]))[-1] and any("call write_file" in line for line in shown),
                 what="the footer on the last row, and the newest checkpoint's row")
        lines = _lines(view, size[1])
        newest = next(index for index, line in enumerate(lines) if "call write_file" in line)
        assert "…" in lines[newest] and "two two" not in lines[newest + 1], lines  # one line, cut
        assert "Back" in lines[-1], lines
        assert "^p" not in view.text() and "palette" not in view.text()
        view.keys("Enter")  # the newest checkpoint (the current one)
        view.wait_screen("Cancel")
        wait_for(lambda: "Restores" in view.text() and "a.txt" in view.text(), what="the preview of the action")
        lines = _lines(view, size[1])
        assert "Back" in lines[-1], lines
        assert any("restored: a.txt" in line or "a.txt" in line for line in lines), lines
        view.keys("Escape")
        view.wait_screen("Enter: choose what")
        view.keys("Escape")
        wait_for(view.dead, what="the menu to close")
    finally:
        view.close()


@pytest.mark.parametrize("size", SIZES, ids=[f"{c}x{r}" for c, r in SIZES])
def test_picker_hints_whole_and_an_exact_name_first_after_ctrl_a(home: Path, workdir: Path, tmp_path: Path,
                                                                size: tuple[int, int]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_session(workdir, sid(1), ["first here"], meta={"title": "here and now"}, when="2026-01-05T00:00:00.000Z")
    write_session(elsewhere, sid(2), ["the road"], meta={"title": "winding"}, when="2026-01-01T00:00:00.000Z")
    for number in range(3, 14):  # newer sessions whose text also says winding
        write_session(elsewhere, sid(number), [f"task {number} on the winding road"], meta={"title": f"task-{number}"},
                      when=f"2026-01-{number:02d}T00:00:00.000Z")
    view = _open(workdir, home, tmp_path, ["sessions", "pick"], size, "1 session(s) in this directory")
    try:
        view.wait_screen("here and now")
        wait_for(lambda: "delete" in _lines(view, size[1])[-1], what="the key hints on the last rows")
        text = view.text()
        assert "here and now" in text  # the newest (current) row is on screen
        assert "^d delete" in text, text  # the key hints wrap; nothing is cut after ^b
        assert "^p" not in text and "palette" not in text
        lines = _lines(view, size[1])
        assert "delete" in lines[-1], lines  # drawn to the window's last row
        view.keys("C-a", "w", "i", "n", "d", "i", "n", "g")  # typed at once after Ctrl+A: no key is lost
        def listed() -> list[str]:
            return [left for line in view.text().split("\n") if line.startswith("▊") and "▎│" in line
                    if (left := line.split("▎")[0].lstrip("▊").strip()) and left.strip("▔▁")]

        # The filter box has every key typed (a lost key never reads so). "windin" matches the same
        # 12 sessions with no exact name to put first: the rows are waited for too, not read from
        # a frame that shows the last key in the box but the list of the key before.
        view.wait_screen("12 session(s) in every project", " ▊  winding ")
        try:
            wait_for(lambda: (rows := listed()) != [] and rows[0].startswith("winding "),
                     what="the exact name first, before 11 newer matches")
        except AssertionError as error:
            raise AssertionError(f"{error}: {listed()}") from None
        view.keys("Escape")
        wait_for(view.dead, what="the picker to close")
    finally:
        view.close()
