"""Session names (`agent/naming.py`) and trace ids (`agent/tracing.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode.agent.naming import checked_name, suggest_title, title_from_prompt
from commandcode.agent.runtime import AgentSession
from commandcode.agent.tracing import MAX_TRACE_IDS, is_trace_id, new_trace_id, with_trace_id
from commandcode.errors import CommandcodeError, UsageError


def test_names_are_trimmed_bounded_and_unique_case_insensitively(home: Path, workdir: Path) -> None:
    with AgentSession.start(workdir) as agent:
        assert agent.rename("  Alpha\r\nBeta ") == "Alpha  Beta"
        agent.turns.run_turn("save it")
        own = agent.session_id
    assert checked_name("alpha  beta", workdir, session_id=own) == "alpha  beta"  # its own name
    with pytest.raises(CommandcodeError, match=f"taken by session {own}"):
        checked_name(" ALPHA  BETA ", workdir, session_id="another")
    with pytest.raises(UsageError, match="empty"):
        checked_name(" \n ", workdir)
    with pytest.raises(UsageError, match="201 characters"):
        checked_name("x" * 201, workdir)
    assert checked_name("x" * 200, workdir) == "x" * 200


def test_titles_come_from_the_first_prompt_text() -> None:
    assert title_from_prompt("  fix   the login bug  \nmore") == "fix the login bug"
    assert title_from_prompt('call bash {"command": "ls"}\nthen explain') == "then explain"
    assert title_from_prompt('call bash {"command": "ls"}') == "bash session"
    long = title_from_prompt("word " * 30)
    assert long is not None and len(long) <= 51 and long.endswith("…")
    assert title_from_prompt("   ") is None


def test_a_suggested_title_is_made_unique(home: Path, workdir: Path) -> None:
    with AgentSession.start(workdir) as agent:
        agent.rename("deploy the app")
        agent.turns.run_turn("x")
    assert suggest_title(["deploy the app"], workdir, session_id="other") == "deploy the app (2)"
    with pytest.raises(CommandcodeError, match="no prompt yet"):
        suggest_title([], workdir, session_id=None)


def test_trace_ids_are_w3c_and_capped() -> None:
    ids = {new_trace_id() for _ in range(50)}
    assert len(ids) == 50 and all(is_trace_id(value) for value in ids)
    assert not is_trace_id("0" * 32) and not is_trace_id("A" * 32) and not is_trace_id(5)
    meta = {"traceIds": [f"{number:032x}" for number in range(1, 150)] + ["junk", None]}
    updated = with_trace_id(meta, "f" * 32)
    assert len(updated) == MAX_TRACE_IDS == 100 and updated[-1] == "f" * 32
    assert with_trace_id({"traceIds": ["f" * 32]}, "f" * 32) == ["f" * 32]  # not appended twice
    assert with_trace_id({"traceIds": "not a list"}, "a" * 32) == ["a" * 32]


def test_a_model_that_writes_titles_is_asked_first(home: Path, workdir: Path) -> None:
    from commandcode.agent.providers.offline import OfflineModel

    class Titling(OfflineModel):
        def suggest_title(self, messages: list[dict[str, object]]) -> str:
            return f"  Model\ntitle after {len(messages)} messages "

    with AgentSession.start(workdir, model=Titling()) as agent:
        agent.turns.run_turn("hello")
        assert agent.suggest_title() == "Model title after 2 messages"
    with AgentSession.start(workdir) as plain:
        plain.turns.run_turn("the offline model titles from this prompt")
        assert plain.suggest_title() == "the offline model titles from this prompt"
