"""The OpenAI-compatible provider against a stub server on 127.0.0.1 (tests/helpers/openai_stub.py):
streamed text, tool-call deltas (parallel calls), usage and cost, the request it sends, and each
failure as one line with the session intact."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from commandcode.agent.events import TurnEvent
from commandcode.agent.providers.openai import OpenAIChatModel
from commandcode.agent.providers.registry import resolve_model
from commandcode.agent.runtime import AgentSession
from commandcode.errors import CommandcodeError, ProviderError, TurnInterrupted, UsageError
from helpers.openai_stub import STUB_KEY, OpenAIStub, Reply, text, tool_calls, write_providers

KEY = STUB_KEY


def _model(name: str = "local/stub-model") -> OpenAIChatModel:
    model = resolve_model(name)
    assert isinstance(model, OpenAIChatModel)
    return model


def _user(text_: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "text": text_}]}]


def test_streamed_text_arrives_in_deltas_with_usage_and_cost(openai_stub: OpenAIStub) -> None:
    openai_stub.reply(text("Hel", "lo ", "world"))
    deltas: list[str] = []
    reply = _model().respond(_user("hi"), on_text=deltas.append)
    assert deltas == ["Hel", "lo ", "world"]
    assert reply.content == [{"type": "text", "text": "Hello world"}]
    # prices per million: (1234-100)*3 + 56*15 + 100*0.3
    assert reply.usage == {"inputTokens": 1234, "outputTokens": 56, "cacheReadTokens": 100, "cacheWriteTokens": 0,
                           "costUsd": pytest.approx((1134 * 3 + 56 * 15 + 100 * 0.3) / 1e6)}
    [request] = openai_stub.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.body
    assert body["model"] == "stub-model" and body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 4096
    assert [tool["function"]["name"] for tool in body["tools"]] == ["read_file", "write_file", "edit_file", "bash"]
    assert body["messages"][0]["role"] == "system" and body["messages"][1:] == [{"role": "user", "content": "hi"}]


def test_parallel_tool_calls_run_and_their_results_go_back(openai_stub: OpenAIStub, here: Path) -> None:
    openai_stub.reply(tool_calls(("call_a", "write_file", {"file_path": "a.txt", "content": "A"}),
                          ("call_b", "write_file", {"file_path": "b.txt", "content": "B"}), text_first="Writing both."))
    openai_stub.reply(text("Done."))
    events: list[TurnEvent] = []
    with AgentSession.start(here, model=_model()) as agent:
        result = agent.turns.run_turn("write two files", on_event=events.append)
    assert result.text == "Done." and result.tool_calls == 2
    assert (here / "a.txt").read_text() == "A" and (here / "b.txt").read_text() == "B"
    second = openai_stub.requests[1].body["messages"]
    assert second[2] == {"role": "assistant", "content": "Writing both.", "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "write_file", "arguments": json.dumps({"file_path": "a.txt", "content": "A"}, separators=(",", ":"))}},
        {"id": "call_b", "type": "function", "function": {"name": "write_file", "arguments": json.dumps({"file_path": "b.txt", "content": "B"}, separators=(",", ":"))}}]}
    assert [m["role"] for m in second[3:]] == ["tool", "tool"] and second[3]["tool_call_id"] == "call_a"
    assert second[3]["content"].startswith("File created successfully at:")
    lines = [json.loads(line) for line in agent.files.transcript.read_text().splitlines()]
    assistants = [line for line in lines if line.get("message", {}).get("role") == "assistant"]
    assert all(line["model"] == "local/stub-model" for line in assistants)
    assert assistants[0]["usage"]["inputTokens"] == 1234
    assert [e.name for e in events if e.kind == "tool_start"] == ["write_file", "write_file"]
    assert KEY not in agent.files.transcript.read_text()


def test_malformed_tool_arguments_are_a_tool_error_the_model_sees(openai_stub: OpenAIStub, here: Path) -> None:
    openai_stub.reply(tool_calls(("call_x", "write_file", '{"file_path": "a.txt", "content": ')))
    openai_stub.reply(text("I will retry."))
    with AgentSession.start(here, model=_model()) as agent:
        result = agent.turns.run_turn("go")
    assert result.text == "I will retry." and result.error is None
    sent = openai_stub.requests[1].body["messages"][-1]
    assert sent["role"] == "tool" and "not valid JSON" in sent["content"]
    assert not (here / "a.txt").exists()


def test_a_non_streamed_completion_is_read_too(openai_stub: OpenAIStub) -> None:
    openai_stub.reply(Reply(text_deltas=["whole reply"], not_streamed=True))
    deltas: list[str] = []
    reply = _model().respond(_user("hi"), on_text=deltas.append)
    assert reply.content == [{"type": "text", "text": "whole reply"}] and deltas == ["whole reply"]


def test_reasoning_and_effort(openai_stub: OpenAIStub, home: Path) -> None:
    write_providers(home, openai_stub.url, models={"thinker": {"reasoning": True, "contextWindow": 1000}})
    openai_stub.reply(Reply(reasoning_deltas=["let me ", "think"], text_deltas=["ok"]))
    model = _model("local/thinker")
    model.effort = "high"
    reply = model.respond(_user("hi"))
    assert reply.content[0] == {"type": "thinking", "thinking": "let me think", "signature": ""}
    assert openai_stub.requests[0].body["reasoning_effort"] == "high" and "max_tokens" not in openai_stub.requests[0].body
    assert model.context_window == 1000
    write_providers(home, openai_stub.url, models={"listed": {"reasoning": True, "reasoningEfforts": ["low", "high"]}})
    listed = _model("local/listed")
    listed.effort = "max"  # not a level this model takes: not sent
    listed.respond(_user("hi"))
    assert "reasoning_effort" not in openai_stub.requests[-1].body


@pytest.mark.parametrize("status, expected", [
    (401, "provider local: authentication failed (HTTP 401): bad key sk-test-***"),
    (404, "provider local: model 'stub-model' not found (HTTP 404): bad key sk-test-***"),
    (500, "provider local: server error (HTTP 500): bad key sk-test-***"),
    (503, "provider local: server error (HTTP 503): bad key sk-test-***"),
    (400, "provider local: request refused (HTTP 400): bad key sk-test-***"),
])
def test_http_errors_are_one_line_without_the_key(openai_stub: OpenAIStub, status: int, expected: str) -> None:
    openai_stub.error(status, f"bad key {KEY[:8]}{KEY[8:]}")
    with pytest.raises(ProviderError) as raised:
        _model().respond(_user("hi"))
    message = str(raised.value).replace("***", "***")
    assert KEY not in message and "\n" not in message
    assert message == expected.replace("sk-test-***", "***")


def test_429_is_retried_with_retry_after_then_reported(openai_stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch) -> None:
    openai_stub.error(429, "slow down", retry_after="0")
    openai_stub.reply(text("after the retry"))
    assert _model().respond(_user("hi")).content == [{"type": "text", "text": "after the retry"}]
    assert len(openai_stub.requests) == 2
    monkeypatch.setenv("COMMANDCODE_PROVIDER_RETRIES", "2")
    for _ in range(3):
        openai_stub.error(429, "slow down", retry_after="0")
    with pytest.raises(ProviderError, match=r"rate limited \(HTTP 429\), still after 2 retries: slow down"):
        _model().respond(_user("hi"))
    assert len(openai_stub.requests) == 5


def test_a_stream_cut_mid_reply_is_reported(openai_stub: OpenAIStub) -> None:
    openai_stub.reply(text("partial ", "reply ", "never ", "finished"), cut_after=3)
    with pytest.raises(ProviderError, match="the stream was cut before the reply was complete"):
        _model().respond(_user("hi"))


def test_connection_refused_and_timeout(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as holder:  # a port nobody listens on, held while it is tried (nobody else takes it)
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        write_providers(home, f"http://127.0.0.1:{port}/v1", api_key=False)
        with pytest.raises(ProviderError, match=r"cannot connect to http://127\.0\.0\.1:\d+ \(connection refused\)"):
            _model().respond(_user("hi"))
    monkeypatch.setenv("COMMANDCODE_PROVIDER_TIMEOUT", "0.5")
    with OpenAIStub() as server:
        write_providers(home, server.url, api_key=False)
        server.reply(text("late"), hang=True)
        with pytest.raises(ProviderError, match=r"no answer from http://127\.0\.0\.1:\d+ within 0\.5s \(timeout\)"):
            _model().respond(_user("hi"))
        server.release.set()


def test_cancel_stops_a_streaming_reply_at_once(openai_stub: OpenAIStub) -> None:
    openai_stub.reply(text("first ", "second"), hang_after_first_chunk=True)
    cancel = threading.Event()

    def stop(delta: str) -> None:
        del delta
        cancel.set()

    with pytest.raises(TurnInterrupted):
        _model().respond(_user("hi"), on_text=stop, cancel=cancel)


def test_a_failed_provider_turn_records_the_prompt_and_the_error(openai_stub: OpenAIStub, here: Path) -> None:
    openai_stub.error(401, "no")
    with AgentSession.start(here, model=_model()) as agent:
        with pytest.raises(CommandcodeError, match="authentication failed"):
            agent.turns.run_turn("my prompt")
        lines = [json.loads(line) for line in agent.files.transcript.read_text().splitlines()]
        texts = [line["message"]["content"][0]["text"] for line in lines[1:]]
        assert texts == ["my prompt", "Error: provider local: authentication failed (HTTP 401): no"]
        openai_stub.reply(text("recovered"))
        assert agent.turns.run_turn("again").text == "recovered"  # the session goes on


def test_api_key_forms(openai_stub: OpenAIStub, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warnings: list[str] = []
    for form, expected in (("{env:STUB_API_KEY}", f"Bearer {KEY}"), ("!printf 'from-command\\n'", "Bearer from-command"),
                           (False, None), ("sk-raw-secret-in-the-file", None)):
        write_providers(home, openai_stub.url, api_key=form)
        openai_stub.reply(text("ok"))
        resolve_model("local/stub-model", warn=warnings.append).respond(_user("hi"))
        assert openai_stub.requests[-1].headers.get("authorization") == expected, form
    assert warnings == ["providers.json: provider local: apiKey looks like a raw secret and is refused; "
                        'use "$VAR", "{env:VAR}" or "!command" instead']
    monkeypatch.delenv("STUB_API_KEY")
    write_providers(home, openai_stub.url)
    with pytest.raises(ProviderError, match="apiKey names the environment variable STUB_API_KEY, which is not set"):
        _model().respond(_user("hi"))


def test_configuration_errors(openai_stub: OpenAIStub, home: Path) -> None:
    with pytest.raises(UsageError, match="unknown provider 'nope'") as raised:
        resolve_model("nope/x")
    assert raised.value.hint is not None and "local" in raised.value.hint
    with pytest.raises(UsageError, match="unknown model 'just-a-name'") as raised:
        resolve_model("just-a-name")
    assert raised.value.hint == "name a model as provider/model (or offline)"
    write_providers(home, openai_stub.url, extra={"api": "anthropic-messages"})
    with pytest.raises(ProviderError, match="api 'anthropic-messages' is not supported; only openai-completions is"):
        _model().respond(_user("hi"))
    assert openai_stub.requests == []
    (home / "providers.json").write_text('{"provider": {"local": ')
    with pytest.raises(ProviderError, match=r"providers\.json:1:\d+: Expecting value"):
        resolve_model("local/stub-model")
    write_providers(home, openai_stub.url, provider="Bad_ID")
    warnings: list[str] = []
    with pytest.raises(UsageError, match="unknown provider 'Bad_ID'"):
        resolve_model("Bad_ID/x", warn=warnings.append)
    assert "provider 'Bad_ID' skipped" in warnings[0]


def test_config_json_names_the_default_model(openai_stub: OpenAIStub, home: Path) -> None:
    assert resolve_model().model_id == "local/stub-model" if (home / "config.json").exists() else True
    write_providers(home, openai_stub.url, default_model="local/stub-model-2")
    model = resolve_model()
    assert model.model_id == "local/stub-model-2" and model.context_window == 8000
    (home / "config.json").unlink()
    assert resolve_model().model_id == "commandcode/offline"


def test_configured_headers_are_sent(openai_stub: OpenAIStub, home: Path) -> None:
    write_providers(home, openai_stub.url, extra={"headers": {"X-Org": "acme", "X-Bad": 5}})
    _model().respond(_user("hi"))
    headers = openai_stub.requests[-1].headers
    assert headers["x-org"] == "acme" and "x-bad" not in headers and headers["authorization"] == f"Bearer {KEY}"
