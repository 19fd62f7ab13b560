"""The tree navigator's rows fold the sub-agent runs a turn started (issue #28): the row of an
assistant entry holding `agent` calls names each run (agent, description, status, messages),
from runs the runner really made; a row without one reads no run."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.sessions.reader import open_session
from commandcode.ui.tree_model import TreeModel
from helpers.subagent_prompts import agent_call, call


@pytest.fixture
def project(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_an_agent_calls_row_shows_its_runs_folded(project: Path) -> None:
    prompt = "\n".join([agent_call(call("write_file", file_path="a.txt", content="a"), description="Write a"),
                        agent_call("just answer", description="Answer", also=True)])
    with AgentSession.start(project, entrypoint="print") as agent:
        agent.turns.run_turn("hello")
        agent.turns.run_turn(prompt)
    model = TreeModel(open_session(agent.files.transcript))
    texts = [text.text for text in model.texts(list(model.rows.order))]
    [row] = [text for text in texts if "⤷" in text]
    assert row.startswith("agent ")
    assert ("⤷ sub-agent general: Write a · completed · 4 messages; general: Answer · completed · 2 messages"
            in row), row
    assert sum("sub-agent" in text for text in texts) == 1
