"""The rewind menu under Textual's Pilot, over real sessions made in-process with the offline
model: rows newest first with "No code changes", the six actions (code ones only where there are
tracked edits) with the preview beside them, the confirmation and its default setting, "Redo"
after a rewind, and "/resume <id> (previous session)"; plus `/rewind` with a fake `Shell`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import OptionList, Static

from commandcode.agent.runtime import AgentSession
from commandcode.checkpoints.modes import RewindMode
from commandcode.errors import CommandcodeError
from commandcode.shell.commands import rewind as rewind_command
from commandcode.ui.app import ScreenApp
from commandcode.ui.rewind_menu import ROW_CHECKPOINT, ROW_REDO, ROW_RESUME, MenuChoice, menu_rows, new_screen, perform


@pytest.fixture
def project(project_here: Path) -> Path:
    return project_here


def _write(path: str, content: str) -> str:
    return "call write_file " + json.dumps({"file_path": path, "content": content})


@pytest.fixture
def session(project: Path) -> str:
    with AgentSession.start(project) as agent:
        agent.turns.run_turn(_write("a.txt", "one\n"))
        agent.turns.run_turn("just a question")
        agent.turns.run_turn(_write("a.txt", "two\n") + "\n" + _write("b.txt", "bee\n"))
        return agent.session_id


def _labels(screen: Any, widget: str) -> list[str]:
    options = screen.query_one(widget, OptionList)
    return [str(options.get_option_at_index(index).prompt) for index in range(options.option_count)]


async def _choose(pilot: Any, widget: str, label: str) -> None:
    options = pilot.app.screen.query_one(widget, OptionList)
    options.highlighted = next(index for index, text in enumerate(_labels(pilot.app.screen, widget)) if text.startswith(label))
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()


def _preview(pilot: Any) -> str:
    return str(pilot.app.screen.query_one("#preview", Static).render())


def test_rows_are_newest_first_with_their_files(session: str, project: Path) -> None:
    rows = menu_rows(AgentSession.for_reference(session))
    assert [(row.kind, row.number, row.files) for row in rows] == [
        (ROW_CHECKPOINT, 3, "2 files changed"), (ROW_CHECKPOINT, 2, "No code changes"),
        (ROW_CHECKPOINT, 1, "1 file changed")]
    assert rows[0].prompt.startswith("call write_file") and rows[1].prompt == "just a question"


@pytest.mark.asyncio
async def test_choosing_a_row_offers_the_actions_with_a_preview_and_confirms(session: str, project: Path) -> None:
    agent = AgentSession.for_reference(session)
    app = ScreenApp(new_screen(agent))
    async with app.run_test(size=(160, 40)) as pilot:
        await _choose(pilot, "#rows", "")  # the newest checkpoint, 3
        assert _labels(app.screen, "#actions") == [
            "Restore code and conversation", "Restore conversation only", "Restore code only",
            "Summarize from here", "Summarize up to here", "Cancel"]
        options = app.screen.query_one("#actions", OptionList)
        options.highlighted = 2  # restore code only: its preview, from a dry run
        await pilot.pause()
        assert "restored: a.txt" in _preview(pilot) and "deleted: b.txt" in _preview(pilot)
        assert "-two" in _preview(pilot) and "+one" in _preview(pilot)
        await _choose(pilot, "#actions", "Restore code and conversation")
        assert _labels(app.screen, "#actions") == ["Yes, restore", "No, go back"]
        assert "Restore code and conversation at checkpoint 3?" in str(app.screen.query_one("#title", Static).render())
        assert app.screen.query_one("#actions", OptionList).highlighted == 0, "the default answer is the action"
        await _choose(pilot, "#actions", "No")  # back to the actions, saying nothing was done
        assert (project / "b.txt").exists() and app.return_value is None
        assert str(app.screen.query_one("#title", Static).render()).startswith("Nothing changed. Checkpoint 3:")
        await _choose(pilot, "#actions", "Restore code and conversation")
        await pilot.press("enter")  # the preselected answer: the action
    choice = app.return_value
    assert isinstance(choice, MenuChoice) and (choice.row.number, choice.mode) == (3, RewindMode.BOTH)
    assert (project / "a.txt").read_text() == "two\n", "the screen only chooses"
    perform(agent, choice)
    assert (project / "a.txt").read_text() == "one\n" and not (project / "b.txt").exists()


@pytest.mark.asyncio
async def test_esc_goes_back_a_step_then_closes_the_menu(session: str, project: Path) -> None:
    app = ScreenApp(new_screen(AgentSession.for_reference(session)))
    async with app.run_test(size=(160, 40)) as pilot:
        await _choose(pilot, "#rows", "")
        await pilot.press("escape")  # from the actions back to the rows
        await pilot.pause()
        assert app.screen.query_one("#actions").display is False
        rows = app.screen.query_one("#rows", OptionList)
        rows.highlighted = 1
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        labels = _labels(app.screen, "#actions")
        assert "Restore code only" in labels  # checkpoint 2 is followed by turn 3's edits: code can go back
        await pilot.press("escape", "escape")
        await pilot.pause()
    assert app.return_value is None


def test_the_last_turn_without_edits_offers_no_code_restore(project: Path) -> None:
    with AgentSession.start(project) as agent:
        agent.turns.run_turn(_write("a.txt", "x"))
        agent.turns.run_turn("no edits here")
    [chat, edit] = menu_rows(AgentSession.for_reference(agent.session_id))
    assert chat.files == "No code changes" and RewindMode.CODE not in chat.modes and RewindMode.BOTH not in chat.modes
    assert RewindMode.CODE in edit.modes


@pytest.mark.asyncio
async def test_the_default_answer_setting_false_makes_no_the_default(session: str, project: Path) -> None:
    settings = project / ".commandcode" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"rewind": {"confirmDefault": false}}')
    app = ScreenApp(new_screen(AgentSession.for_reference(session)))
    async with app.run_test(size=(160, 40)) as pilot:
        await _choose(pilot, "#rows", "")
        await _choose(pilot, "#actions", "Summarize from here")  # the summarize actions ask too
        assert _labels(app.screen, "#actions") == ["Yes, summarize", "No, go back"]
        assert app.screen.query_one("#actions", OptionList).highlighted == 1, "the setting makes no the default"


@pytest.mark.asyncio
async def test_redo_row_after_a_rewind_and_the_default_answer_setting(session: str, project: Path) -> None:
    agent = AgentSession.for_reference(session)
    agent.rewinds.rewind(1, RewindMode.CODE)
    app = ScreenApp(new_screen(agent))
    async with app.run_test(size=(160, 40)) as pilot:
        assert _labels(app.screen, "#rows")[0] == "Redo: undo the last rewind"
        await _choose(pilot, "#rows", "Redo")
        assert _labels(app.screen, "#actions") == ["Yes, redo", "No, go back"]
        assert app.screen.query_one("#actions", OptionList).highlighted == 0, "yes, the action, is the default"
        assert "restored: a.txt" in _preview(pilot) or "recreated: a.txt" in _preview(pilot)
        await pilot.press("enter")
        await pilot.pause()
    choice = app.return_value
    assert isinstance(choice, MenuChoice) and choice.row.kind == ROW_REDO
    perform(agent, choice)
    assert (project / "a.txt").read_text() == "two\n" and (project / "b.txt").read_text() == "bee\n"


@pytest.mark.asyncio
async def test_the_previous_session_comes_last_and_enter_rewinds(session: str, project: Path) -> None:
    """In a fork (or after /clear) the preselected first row is the newest checkpoint: Enter
    rewinds; "/resume <id> (previous session)" is the last row."""
    with AgentSession.start(project) as other:
        other.turns.run_turn("the session /clear left")
    app = ScreenApp(new_screen(AgentSession.for_reference(session), other.session_id))
    async with app.run_test(size=(160, 40)) as pilot:
        assert _labels(app.screen, "#rows")[-1] == f"/resume {other.session_id} (previous session)"
        await pilot.press("enter")
        await pilot.pause()
        assert str(app.screen.query_one("#title", Static).render()).startswith("Checkpoint 3:")
        await pilot.press("escape")
        await pilot.pause()
        await _choose(pilot, "#rows", "/resume")
    assert app.return_value.row.kind == ROW_RESUME and app.return_value.row.session_id == other.session_id


class FakeShell:
    """The `Shell` a slash command gets, with the screen's answer given up front."""

    def __init__(self, agent: AgentSession, answer: Any, previous: str | None = None) -> None:
        self.cwd = agent.cwd
        self.agent = agent
        self.previous_session_id = previous
        self.answer = answer
        self.printed: list[str] = []
        self.screens: list[Any] = []
        self.switched: list[AgentSession] = []
        self.input_box = ""
        from commandcode.config.context import ProjectContext

        self.project = ProjectContext(agent.cwd)  # the shell's context (the menu's confirmDefault)

    def run_screen(self, screen: Any) -> Any:
        self.screens.append(screen)
        return self.answer(screen) if callable(self.answer) else self.answer

    def print(self, text: str) -> None:
        self.printed.append(text)

    notice = print

    def switch_to(self, agent: AgentSession, *, keep_grants: bool = True) -> None:
        self.switched.append(agent)

    def put_input(self, text: str) -> None:
        self.input_box = text

    def show_recap(self) -> None:
        self.recapped = True


def test_slash_rewind_runs_the_choice_and_resume_switches(session: str, project: Path) -> None:
    agent = AgentSession.for_reference(session)
    code_only = lambda screen: MenuChoice(screen.rows[0], RewindMode.CODE)  # noqa: E731
    shell = FakeShell(agent, code_only)
    rewind_command.run(shell, "")  # type: ignore[arg-type]
    assert (project / "a.txt").read_text() == "one\n" and "Rewound to checkpoint 3" in shell.printed[0]
    assert shell.input_box == "", "a code-only rewind leaves the input box alone"
    conversation = FakeShell(agent, lambda screen: MenuChoice(
        next(row for row in screen.rows if row.number == 2), RewindMode.CONVERSATION))
    rewind_command.run(conversation, "")  # type: ignore[arg-type]
    assert conversation.input_box == "just a question", "the rewound prompt goes back into the input box"
    resume = FakeShell(agent, lambda screen: MenuChoice(screen.rows[-1]), previous=session[:8] and _other(project))
    rewind_command.run(resume, "")  # type: ignore[arg-type]
    assert [switched.session_id for switched in resume.switched] == [resume.previous_session_id]
    cancelled = FakeShell(agent, None)
    rewind_command.run(cancelled, "")  # type: ignore[arg-type]
    assert cancelled.printed == ["Rewind cancelled; nothing was changed"]
    with pytest.raises(CommandcodeError, match="takes no arguments"):
        rewind_command.run(cancelled, "3")  # type: ignore[arg-type]


def _other(project: Path) -> str:
    with AgentSession.start(project) as other:
        other.turns.run_turn("another session")
        return other.session_id


@pytest.mark.asyncio
async def test_a_session_without_checkpoints_says_so(project: Path) -> None:
    """A clone (no checkpoints) opened after a /clear: the menu says there are none yet, above
    the one row it has."""
    with AgentSession.start(project) as other:
        other.turns.run_turn("the session /clear left")
    with AgentSession.start(project) as empty:
        pass
    app = ScreenApp(new_screen(empty, other.session_id))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        assert _labels(app.screen, "#rows") == [f"/resume {other.session_id} (previous session)"]
        assert "No checkpoints yet" in str(app.screen.query_one("#title", Static).render())


def test_a_long_prompt_is_one_row_and_no_palette_hint(project: Path) -> None:
    from commandcode.ui.rewind_menu import PROMPT_CHARS, one_line

    long = "please refactor " + "the payment module " * 20 + "\nand the second line"
    with AgentSession.start(project) as agent:
        agent.turns.run_turn(long)
    [row] = menu_rows(AgentSession.for_reference(agent.session_id))
    shown = row.label.split("  ")[1]
    assert shown == one_line(long) and shown.endswith("…") and len(shown) <= PROMPT_CHARS + 1 and "\n" not in row.label
    assert one_line("short") == "short" and one_line("two\nlines") == "two…"
    assert ScreenApp.ENABLE_COMMAND_PALETTE is False
