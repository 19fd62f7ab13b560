"""Compaction (agent/compaction.py) on real sessions: `/compact` and the automatic one, the kept
tail rule of ref §11, the appended entry (the log is never rewritten), `meta.compaction`
across resumes, the summary from a provider or the offline model, and fast mode's trims."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commandcode.agent.compaction import TRIMMED, kept_start, trimmed_view
from commandcode.agent.events import TurnEvent
from commandcode.agent.providers.registry import resolve_model
from commandcode.agent.runtime import AgentSession
from commandcode.errors import ProviderError
from commandcode.sessions.context import COMPACTION_PREFIX
from commandcode.sessions.meta import read_meta
from commandcode.sessions.reader import open_session
from commandcode.sessions.tokens import estimate_tokens
from helpers.openai_stub import OpenAIStub, text, write_providers

BIG = "x" * 8000  # ~2,000 tokens per prompt


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _long_session(here: Path, turns: int = 24, **options: Any) -> AgentSession:
    agent = AgentSession.start(here, **options)
    agent.__enter__()
    for number in range(turns):
        agent.turns.run_turn(f"request {number}\n{BIG}")
    return agent


def test_compact_appends_an_entry_keeps_the_tail_and_resumes_to_the_same_context(here: Path) -> None:
    agent = _long_session(here)
    try:
        before = agent.files.transcript.read_bytes()
        tokens = estimate_tokens(agent.handle.messages)
        result = agent.compaction.compact()
        assert result is not None
        after = agent.files.transcript.read_bytes()
        assert after.startswith(before)  # appended; nothing rewritten
        entry = _lines(agent.files.transcript)[-1]
        assert list(entry) == ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore"]
        assert entry["type"] == "compaction" and entry["tokensBefore"] == tokens == result.tokens_before
        assert entry["summary"].startswith("**Goal**\nrequest 0")
        kept = next(line for line in _lines(agent.files.transcript) if line["id"] == entry["firstKeptEntryId"])
        assert kept["message"]["role"] == "user" and kept["message"]["content"][0]["text"].startswith("request ")
        assert estimate_tokens(agent.handle.messages[1:]) >= 30_000  # about the newest 30,000 tokens stay verbatim
        assert agent.handle.messages[0]["content"][0]["text"] == COMPACTION_PREFIX + entry["summary"]
        resumed = open_session(agent.files.transcript).context()
        assert resumed.messages == agent.handle.messages and resumed.entry_ids == agent.handle.entry_ids
        stats = read_meta(agent.files.meta)["compaction"]
        assert stats["count"] == 1 and stats["tokensSaved"] == stats["lastTokensSaved"] == result.saved > 10_000
        agent.turns.run_turn("after the compaction")  # the next entry is a child of the compaction
        assert _lines(agent.files.transcript)[-2]["parentId"] == entry["id"]
    finally:
        agent.close()
    with AgentSession.start(here, reference=agent.session_id) as again:
        for number in range(20):
            again.turns.run_turn(f"more {number}\n{BIG}")
        second = again.compaction.compact("keep the file names")
        assert second is not None and second.count == 2
        assert second.total_saved == stats["tokensSaved"] + second.saved
        assert second.summary.startswith("**Focus requested**\nkeep the file names")
        assert "**Earlier summary**" in second.summary
        assert again.compaction.saved == second.saved  # this process's savings
        assert again.compaction.totals()["tokensSaved"] == second.total_saved
        again.models.set_permission_mode("plan")
        assert again.models.effective_permission_mode() == "plan"
    assert read_meta(agent.files.meta)["compaction"]["count"] == 2


def test_too_little_to_summarize_appends_nothing(here: Path) -> None:
    with AgentSession.start(here) as agent:
        for number in range(3):
            agent.turns.run_turn(f"short {number}")
        before = agent.files.transcript.read_bytes()
        assert agent.compaction.compact() is None
        assert agent.files.transcript.read_bytes() == before
        assert "compaction" not in read_meta(agent.files.meta)


def test_the_kept_tail_starts_at_a_fresh_user_turn() -> None:
    def user(text_: str) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "text", "text": text_}]}

    def tool_result() -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": [{"type": "text", "text": "r"}]}]}

    def assistant(text_: str = "a") -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "text", "text": text_}]}

    messages = [user("p0"), assistant(), user("p1"), assistant(), user("p2"), assistant(), user("p3"),
                assistant(), tool_result(), assistant("done")]
    cut = kept_start(messages, keep_tokens=1)
    assert cut == 6 and messages[cut] == user("p3")  # backed up past the tool result to the prompt
    assert kept_start(messages[:6], keep_tokens=1) is None  # only 3 messages before the tail: under 5


def test_automatic_compaction_past_90_percent_of_the_window(here: Path) -> None:
    agent = _long_session(here, turns=12)
    try:
        (here / ".commandcode").mkdir()
        (here / ".commandcode" / "settings.json").write_text(json.dumps({"contextWindow": 25_000}))
        assert agent.compaction.window() == 25_000
        events: list[TurnEvent] = []
        agent.turns.run_turn("next", on_event=events.append)
        notices = [event.text for event in events if event.kind == "notice"]
        assert len(notices) == 1 and notices[0].startswith("context was over 90% of the 25,000-token window: compacted")
        types = [line["type"] for line in _lines(agent.files.transcript)]
        assert types.count("compaction") == 1 and types.index("compaction") < len(types) - 2
    finally:
        agent.close()


def test_switching_to_a_smaller_window_compacts(here: Path, openai_stub: OpenAIStub, home: Path) -> None:
    write_providers(home, openai_stub.url, models={"tiny": {"contextWindow": 20_000}})
    notices: list[str] = []
    agent = _long_session(here, turns=12, notify=notices.append)
    try:
        openai_stub.reply(text("**Goal**\nsummary by the tiny model"))
        agent.models.set_model("local/tiny")
        types = [line["type"] for line in _lines(agent.files.transcript)]
        assert types[-2:] == ["model_change", "compaction"]
        assert notices and "20,000-token window" in notices[0]
    finally:
        agent.close()


def test_fast_mode_trims_old_tool_output_without_persisting(here: Path) -> None:
    messages: list[dict[str, Any]] = []
    for number in range(12):
        messages += [{"role": "user", "content": [{"type": "text", "text": f"p{number}"}]},
                     {"role": "assistant", "content": [{"type": "tool_use", "id": f"c{number}", "name": "bash", "input": {}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"c{number}",
                                                   "content": [{"type": "text", "text": "y" * 4000}]}]}]
    total = estimate_tokens(messages)
    assert trimmed_view(messages, total * 3) is messages  # under 50 %: untouched
    mid = trimmed_view(messages, int(total * 1.5))  # 50-80 %: older than the kept tail
    trimmed = [index for index, message in enumerate(mid) if message is not messages[index]]
    assert trimmed and all(mid[i]["content"][0]["content"][0]["text"] == TRIMMED for i in trimmed)
    late = trimmed_view(messages, int(total * 1.1))  # over 80 %: all but the current turn's
    assert sum(message is not messages[index] for index, message in enumerate(late)) == 11
    assert messages[2]["content"][0]["content"][0]["text"] == "y" * 4000  # the stored message is unchanged
    with AgentSession.start(here) as agent:
        agent.compaction.mode = "fast"
        agent.turns.run_turn("a turn in fast mode")
        assert agent.files.transcript.exists()


def test_the_provider_writes_the_summary(here: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_API_KEY", "k")
    with OpenAIStub() as stub:
        write_providers(home, stub.url)
        agent = _long_session(here, turns=20)
        try:
            agent.models.model = resolve_model("local/stub-model")
            stub.error(500, "summarizer down")
            before = agent.files.transcript.read_bytes()
            with pytest.raises(ProviderError, match="server error"):
                agent.compaction.compact()
            assert agent.files.transcript.read_bytes() == before  # nothing appended
            (here / ".commandcode").mkdir()
            (here / ".commandcode" / "settings.json").write_text(json.dumps({"contextWindow": 40_000}))
            stub.error(500, "summarizer down")
            stub.reply(text("the turn still runs"))
            events: list[TurnEvent] = []
            assert agent.turns.run_turn("go on", on_event=events.append).text == "the turn still runs"
            assert [event.text for event in events if event.kind == "notice"] == [
                "automatic compaction failed: provider local: server error (HTTP 500): summarizer down; "
                "the context was left as it is"]
            (here / ".commandcode" / "settings.json").unlink()
            stub.reply(text("**Goal**\nthe model's own summary"))
            result = agent.compaction.compact("mention the tests")
            assert result is not None and result.summary == "**Goal**\nthe model's own summary"
            request = stub.requests[-1].body
            assert "tools" not in request and "mention the tests" in request["messages"][-1]["content"]
        finally:
            agent.close()
