"""Branch summaries written by the provider when one is configured (the issue: "the provider
writes it when one is configured, the offline model writes an extractive one"): the tree
navigator asks the model in a worker thread and offers its text, `goto --summary` without a text
asks it too, and a provider that fails falls back to the extractive summary with one notice,
never a failed jump. Against the stub OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from commandcode.agent.providers.registry import resolve_model
from commandcode.agent.runtime import AgentSession
from commandcode.agent.session_navigation import BRANCH_INSTRUCTIONS
from commandcode.sessions.reader import open_session
from commandcode.ui.app import ScreenApp
from commandcode.ui.screens.dialogs import SummaryScreen
from commandcode.ui.screens.tree import TreeScreen
from commandcode.ui.widgets.tree_view import TreeView
from helpers.openai_stub import text
from helpers.trees import branched_session


def _agent(workdir: Path, notices: list[str]) -> tuple[AgentSession, dict[str, str]]:
    files, ids = branched_session(workdir)
    agent = AgentSession(files, workdir, is_new=False, model=resolve_model("local/stub-model"), notify=notices.append)
    return agent, ids


def _last_user_text(body: Any) -> str:
    return str(body["messages"][-1]["content"] if isinstance(body["messages"][-1]["content"], str)
               else body["messages"][-1]["content"][0]["text"])


@pytest.mark.asyncio
async def test_the_navigator_offers_the_models_summary(home: Path, workdir: Path, openai_stub: Any) -> None:
    notices: list[str] = []
    agent, ids = _agent(workdir, notices)
    openai_stub.reply(text("**Goal** tried branch B: ", "wrote b.txt"))
    app = ScreenApp(TreeScreen(agent))
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.screen.query_one(TreeView)
        view.cursor = view.model.row_of(ids["a3"])
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        assert app.screen.query_one("#summary").text == "**Goal** tried branch B: wrote b.txt"  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert len(openai_stub.requests) == 1
    body = openai_stub.requests[0].body
    assert BRANCH_INSTRUCTIONS in _last_user_text(body) and "tools" not in body
    assert any("third prompt on branch B" in str(message) for message in body["messages"])  # the branch left
    assert not any("second prompt on branch A" in str(message) for message in body["messages"])
    session = open_session(agent.files.transcript)
    summary = session.read_entries([session.leaf_id])[0]
    assert summary["type"] == "branch_summary" and summary["summary"] == "**Goal** tried branch B: wrote b.txt"
    assert summary["parentId"] == ids["a3"] and notices == []


def test_goto_asks_the_model_and_falls_back_when_it_fails(home: Path, workdir: Path, openai_stub: Any) -> None:
    notices: list[str] = []
    agent, ids = _agent(workdir, notices)
    openai_stub.error(500, "the model is down")
    result = agent.navigation.goto(ids["a3"], summary=True)
    assert result.summary_entry_id is not None
    session = open_session(agent.files.transcript)
    written = session.read_entries([result.summary_entry_id])[0]["summary"]
    assert written.startswith("**Goal**\nthird prompt on branch B")  # the extractive summary
    assert len(notices) == 1 and "did not write the branch summary" in notices[0]
    openai_stub.reply(text("the model's own words"))
    back = agent.navigation.goto(ids["a5"], summary=True)
    assert open_session(agent.files.transcript).read_entries([back.summary_entry_id])[0]["summary"] == "the model's own words"
    assert len(notices) == 1


@pytest.mark.asyncio
async def test_commandcode_tree_asks_the_recorded_model_in_a_worker(home: Path, workdir: Path, openai_stub: Any) -> None:
    """`commandcode tree REF` opens the session without its writer or a model: the navigator
    still learns the recorded provider before the jump, and asks it off the UI thread."""
    from helpers.cli import only_transcript, run_ok

    run_ok(["-p", "first prompt", "--model", "local/stub-model"], workdir, home)
    run_ok(["-c", "-p", "second prompt"], workdir, home)
    transcript = only_transcript(home, workdir)
    first_answer = open_session(transcript).path_ids()[1]
    agent = AgentSession.for_reference(transcript.stem, cwd=workdir)
    openai_stub.reply(text("from the recorded model"))
    asked = len(openai_stub.requests)
    app = ScreenApp(TreeScreen(agent))
    async with app.run_test(size=(120, 30)) as pilot:
        tree = app.screen
        view = tree.query_one(TreeView)
        view.cursor = view.model.row_of(first_answer)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "asking the model" in str(tree.query_one("#status").render())  # the worker path was taken
        assert isinstance(app.screen, SummaryScreen)
        assert app.screen.query_one("#summary").text == "from the recorded model"  # type: ignore[attr-defined]
        await pilot.press("escape")  # cancel: nothing is written
        await pilot.pause()
        await pilot.press("q")
    assert len(openai_stub.requests) == asked + 1
    assert open_session(transcript).path_ids()[-1] != first_answer
