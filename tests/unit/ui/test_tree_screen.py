"""The tree navigator (`ui/screens/tree.py`) driven by Pilot: keys pressed, the screen's rows and
the session's files asserted (the jump, the label and the summary reach the transcript)."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.sessions.reader import open_session
from commandcode.ui.app import ScreenApp
from commandcode.ui.screens.dialogs import PromptScreen, SummaryScreen
from commandcode.ui.screens.tree import TreeScreen
from commandcode.ui.widgets.tree_view import TreeView
from helpers.trees import branched_session

pytestmark = pytest.mark.asyncio


def _agent(home: Path, workdir: Path) -> tuple[AgentSession, dict[str, str]]:
    files, ids = branched_session(workdir)
    return AgentSession(files, workdir, is_new=False), ids


def _screen_text(app: ScreenApp) -> str:
    view = app.screen.query_one(TreeView)
    return "\n".join(view.render_line(y).text for y in range(min(len(view.model.rows), view.size.height)))


def _select(app: ScreenApp, entry_id: str) -> None:
    view = app.screen.query_one(TreeView)
    view.cursor = view.model.row_of(entry_id)
    assert view.model.id_of(view.model.rows[view.cursor][0]) == entry_id


async def _offer_jump(pilot: object, app: ScreenApp, entry_id: str, answer: str) -> None:
    """Selects `entry_id`, presses Enter, and answers the summary offer (a key, or `#id` to click)."""
    _select(app, entry_id)
    await pilot.press("enter")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    assert isinstance(app.screen, SummaryScreen)
    if answer.startswith("#"):
        await pilot.click(answer)  # type: ignore[attr-defined]
    else:
        await pilot.press(answer)  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]


def _status(app: ScreenApp) -> str:
    return str(app.screen.query_one("#status").render())


async def test_every_branch_is_shown_with_the_active_path_and_the_leaf(home: Path, workdir: Path) -> None:
    agent, ids = _agent(home, workdir)
    app = ScreenApp(TreeScreen(agent))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        text = _screen_text(app)
        lines = text.splitlines()
        assert [line.split()[1] for line in lines] == [ids[k] for k in ("u1", "a1", "u2", "a2", "r2", "a3", "u3", "a4", "r4", "a5")]
        assert "◆ " + ids["a5"] in text and "○ " + ids["u2"] in text and "● " + ids["u3"] in text
        assert "second prompt on branch A" in text and "read_file" in text and "7 tok" in text
        assert lines[2].startswith("  ")  and not lines[1].startswith(" ")  # a fork indents its branches
        view = app.screen.query_one(TreeView)
        assert view.model.rows[view.cursor][0] == view.model.position_of(ids["a5"])  # the cursor starts on the leaf
        await pilot.press("q")
    assert app.return_value is None


async def test_enter_jumps_and_the_summary_can_be_kept_as_edited(home: Path, workdir: Path) -> None:
    agent, ids = _agent(home, workdir)
    before = open_session(agent.files.transcript).entry_count
    app = ScreenApp(TreeScreen(agent))
    async with app.run_test(size=(120, 30)) as pilot:
        _select(app, ids["a3"])
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        area = app.screen.query_one("#summary")
        area.text = "my own summary of branch B"  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.return_value is not None and f"moved to entry {ids['a3']}" in app.return_value
    session = open_session(agent.files.transcript)
    assert session.entry_count == before + 1
    summary = session.read_entries([session.leaf_id])[0]
    assert summary["type"] == "branch_summary" and summary["parentId"] == ids["a3"]
    assert summary["summary"] == "my own summary of branch B" and summary["fromId"] == ids["a5"]
    assert summary["details"]["modifiedFiles"] == [str(workdir / "b.txt")]
    assert ids["a3"] in session.context().entry_ids


async def test_skipping_the_summary_moves_the_leaf_with_a_marker(home: Path, workdir: Path) -> None:
    agent, ids = _agent(home, workdir)
    app = ScreenApp(TreeScreen(agent))
    async with app.run_test(size=(120, 30)) as pilot:
        await _offer_jump(pilot, app, ids["u2"], "#skip")
    session = open_session(agent.files.transcript)
    marker = session.read_entries([session.leaf_id])[0]
    assert marker["type"] == "custom" and marker["data"] == {"reason": "goto"} and marker["parentId"] == ids["u2"]


async def test_escape_in_the_summary_cancels_the_jump_and_writes_nothing(home: Path, workdir: Path) -> None:
    agent, ids = _agent(home, workdir)
    before = agent.files.transcript.read_bytes()
    app = ScreenApp(TreeScreen(agent))
    async with app.run_test(size=(120, 30)) as pilot:
        await _offer_jump(pilot, app, ids["u2"], "escape")
        assert isinstance(app.screen, TreeScreen) and "cancelled" in _status(app)
        await pilot.press("q")
    assert agent.files.transcript.read_bytes() == before


async def test_fold_filter_search_and_labels(home: Path, workdir: Path) -> None:
    agent, ids = _agent(home, workdir)
    app = ScreenApp(TreeScreen(agent))
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.screen.query_one(TreeView)
        _select(app, ids["u2"])
        await pilot.press("space")
        assert ids["a2"] not in _screen_text(app) and "▸ " + ids["u2"] in _screen_text(app)
        await pilot.press("space")
        assert ids["a2"] in _screen_text(app)
        await pilot.press("f")  # no tools
        assert view.model.filter == "no tools" and ids["a2"] not in _screen_text(app) and ids["a3"] in _screen_text(app)
        await pilot.press("f")  # user only
        assert [line.split()[1] for line in _screen_text(app).splitlines()] == [ids["u1"], ids["u2"], ids["u3"]]
        await pilot.press("f", "f")  # labeled only (none yet), then default
        assert view.model.filter == "default"
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"branch a", "enter")
        await pilot.pause()
        assert view.model.id_of(view.selected) == ids["u2"]  # type: ignore[arg-type]
        await pilot.press("l")
        await pilot.pause()
        await pilot.press(*"try-a", "enter")
        await pilot.pause()
        assert "[try-a]" in _screen_text(app)
        await pilot.press("f", "f", "f")
        assert [line.split()[1] for line in _screen_text(app).splitlines()] == [ids["u2"]]
        await pilot.press("f", "L")  # back to default, clear the label of the selected entry
        await pilot.pause()
        assert "[try-a]" not in _screen_text(app)
        await pilot.press("escape")
    assert app.return_value == f"labelled {ids['u2']}; cleared the label of {ids['u2']}"
    session = open_session(agent.files.transcript)
    labels = [entry for entry in session.entries() if entry["type"] == "label"]
    assert [entry.get("label") for entry in labels] == ["try-a", None] and session.labels() == {}
    assert session.context().entry_ids[-1] == ids["a5"]  # labels never move the conversation


async def test_a_refused_jump_is_one_status_line_and_writes_nothing(home: Path, workdir: Path) -> None:
    from helpers.cli import hold_writer, stop

    agent, ids = _agent(home, workdir)
    holder = hold_writer(agent.files.transcript, workdir, home)
    try:
        before = agent.files.transcript.read_bytes()
        app = ScreenApp(TreeScreen(agent))
        async with app.run_test(size=(120, 30)) as pilot:
            await _offer_jump(pilot, app, ids["u2"], "#skip")
            assert isinstance(app.screen, TreeScreen)
            assert _status(app).startswith("error: ") and "open for writing by process" in _status(app)
            await pilot.press("l")
            await pilot.pause()
            await pilot.press(*"x", "enter")
            await pilot.pause()
            assert _status(app).startswith("error: ")
            await pilot.press("q")
        assert app.return_value is None and agent.files.transcript.read_bytes() == before
    finally:
        stop(holder)


async def test_the_content_filters_read_no_line(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """"no tools" and "user only" come from the scan's per-entry facts: cycling to them reads
    the text of the rows drawn and nothing else (they once read every message, 15.7 s at 1 GB)."""
    agent, ids = _agent(home, workdir)
    app = ScreenApp(TreeScreen(agent))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        view = app.screen.query_one(TreeView)
        asked: list[str] = []
        read_entries = view.model.session.read_entries
        monkeypatch.setattr(view.model.session, "read_entries", lambda wanted: asked.extend(wanted) or read_entries(wanted))
        await pilot.press("f")
        await pilot.pause()
        assert view.model.filter == "no tools" and ids["a2"] not in _screen_text(app) and ids["a3"] in _screen_text(app)
        assert asked == []  # every row shown was on the default screen already: its text is known
        await pilot.press("f")
        await pilot.pause()
        assert [line.split()[1] for line in _screen_text(app).splitlines()] == [ids["u1"], ids["u2"], ids["u3"]]
        assert asked == []
        await pilot.press("q")


async def test_hostile_text_is_drawn_inert(home: Path, workdir: Path) -> None:
    from commandcode.sessions.writer import SessionWriter

    agent, ids = _agent(home, workdir)
    with SessionWriter(agent.files, str(workdir)) as writer:
        writer.append_message({"role": "user", "content": "evil \x1b]2;pwned\x07 [bold]x[/] \u202e"})
        writer.append_entry("session_info", {"name": "[/]\x1b[31m"})
        writer.append_entry("label", {"targetId": ids["u1"], "label": "\x1b[2J"})
        writer.commit(force=True)
    app = ScreenApp(TreeScreen(agent))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        text = _screen_text(app)
        assert "\x1b" not in text and "\\x1b]2;pwned\\x07 [bold]x[/] \\u202e" in text and "[\\x1b[2J]" in text
        assert "\\x1b[31m" in str(app.screen.query_one("#title").render())
        await pilot.press("q")


async def test_a_fold_says_what_it_hides_and_summaries_show_no_markdown(home: Path, workdir: Path) -> None:
    agent, ids = _agent(home, workdir)
    agent.navigation.goto(ids["a3"], summary="## Goal\n**Fix** the `parser` ([notes](http://example.com))\n- step one")
    app = ScreenApp(TreeScreen(agent))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        summary_row = next(line for line in _screen_text(app).splitlines() if "branch_summary" in line)
        assert "branch_summary Goal: Fix the parser (notes)" in summary_row, summary_row  # heading joined, marks gone
        assert "**" not in summary_row and "##" not in summary_row and "`" not in summary_row
        _select(app, ids["u2"])
        await pilot.press("space")
        folded = next(line for line in _screen_text(app).splitlines() if ids["u2"] in line)
        assert folded.split()[0] == "▸" and "(+4 hidden)" in folded, folded  # a2, r2, a3 and the summary
        assert "folded 4 rows" in _status(app)
        await pilot.press("escape")
