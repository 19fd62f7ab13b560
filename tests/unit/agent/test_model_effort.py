"""`AgentSession.set_model` / `set_effort` and model adoption: `model_change` and `effort_change`
entries as the real CLI writes them, `meta.model`/`modelProvider`, the effort on later assistant
entries, and a resumed session going on with its own model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.errors import UsageError
from commandcode.sessions.meta import read_meta
from commandcode.sessions.reader import open_session
from helpers.openai_stub import OpenAIStub, write_providers


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_switches_are_entries_and_meta_and_survive_a_resume(openai_stub: OpenAIStub, here: Path) -> None:
    with AgentSession.start(here) as agent:
        agent.turns.run_turn("first")  # the offline model
        assert agent.models.set_model("local/stub-model-2") == "local/stub-model-2"
        assert _lines(agent.files.transcript)[-1] == {**_lines(agent.files.transcript)[-1], "type": "model_change",
                                                      "model": "local/stub-model-2"}  # committed at once
        meta = read_meta(agent.files.meta)
        assert (meta["model"], meta["modelProvider"]) == ("local/stub-model-2", "local")
        agent.models.set_effort("High")
        assert _lines(agent.files.transcript)[-1]["effort"] == "high"
        agent.turns.run_turn("second")
        assistant = _lines(agent.files.transcript)[-1]
        assert (assistant["model"], assistant["effort"]) == ("local/stub-model-2", "high")
        assert agent.compaction.window() == 8000
        with pytest.raises(UsageError, match="unknown effort 'turbo'"):
            agent.models.set_effort("turbo")
        with pytest.raises(UsageError, match="unknown provider 'gone'"):
            agent.models.set_model("gone/model")
        assert agent.models.model.model_id == "local/stub-model-2"  # a refused switch changes nothing
    session = open_session(agent.files.transcript)
    assert (session.model, session.effort) == ("local/stub-model-2", "high")
    with AgentSession.start(here, continue_last=True) as resumed:
        assert resumed.models.model.model_id == "local/stub-model-2" and resumed.models.effort == "high"
        resumed.models.set_model("offline")
        assert read_meta(resumed.files.meta)["model"] == "commandcode/offline"
        assert "modelProvider" not in read_meta(resumed.files.meta)


def test_a_new_session_writes_its_switch_with_the_first_turn(openai_stub: OpenAIStub, here: Path, home: Path) -> None:
    with AgentSession.start(here) as agent:
        agent.models.set_model("local/stub-model")
        assert not agent.files.transcript.exists()
        agent.turns.run_turn("hi")
    types = [line["type"] for line in _lines(agent.files.transcript)[1:]]
    assert types == ["model_change", "message", "message"]
    assert read_meta(agent.files.meta)["model"] == "local/stub-model"
    (home / "providers.json").unlink()
    notices: list[str] = []
    with AgentSession.start(here, reference=agent.session_id, notify=notices.append) as resumed:
        assert resumed.models.model.model_id == "commandcode/offline"
    assert notices and notices[0].startswith("the session's model local/stub-model is not available")
