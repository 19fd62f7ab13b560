"""What we send a provider for a resumed session, as the real CLI sends it (issue 32 §5): a tool
call without a result (interrupted or lost) gets the real CLI's synthetic answer and a result
whose call is gone is left out, so a strict OpenAI-compatible server takes the request; thinking
that carries a signature goes back as `reasoning_content`, one without stays home; streamed
reasoning is recorded as the real CLI records it (unsigned, first) and tool-call arguments go out as
its `JSON.stringify` writes them."""

from __future__ import annotations

from typing import Any

from commandcode.agent.providers.openai import OpenAIChatModel
from commandcode.agent.providers.registry import resolve_model
from commandcode.sessions.tool_results import NO_RESULT, with_tool_results
from helpers.openai_stub import OpenAIStub, Reply, text

CALL = {"type": "tool_use", "id": "call_b1", "name": "read_file", "input": {"file_path": "x.txt"}}


def _sent(openai_stub: OpenAIStub, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    openai_stub.reply(text("ok"))
    model = resolve_model("local/stub-model")
    assert isinstance(model, OpenAIChatModel)
    model.respond(messages)
    return list(openai_stub.requests[-1].body["messages"][1:])


def test_an_unanswered_call_gets_the_real_clis_synthetic_result(openai_stub: OpenAIStub) -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "read it"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "reading"}, CALL]},
                {"role": "user", "content": [{"type": "text", "text": "go on"}]}]
    sent = _sent(openai_stub, messages)
    assert [message["role"] for message in sent] == ["user", "assistant", "tool", "user"]
    assert sent[2] == {"role": "tool", "tool_call_id": "call_b1", "content": NO_RESULT}
    assert NO_RESULT == "No result \u2014 the tool call did not complete (interrupted or lost)."


def test_an_orphan_result_is_left_out_and_answered_calls_are_untouched(openai_stub: OpenAIStub) -> None:
    answered = [{"role": "user", "content": [{"type": "text", "text": "read it"}]},
                {"role": "assistant", "content": [CALL]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_b1", "content": "ex"}]}]
    assert with_tool_results(answered) is answered
    orphan = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "x"},
                                           {"type": "text", "text": "hello"}]}]
    sent = _sent(openai_stub, orphan)
    assert sent == [{"role": "user", "content": "hello"}]


def test_signed_thinking_goes_back_as_reasoning_content(openai_stub: OpenAIStub) -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "think"}]},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "I ponder", "signature": "sig"},
                                                  {"type": "text", "text": "answer"}]},
                {"role": "user", "content": [{"type": "text", "text": "again"}]},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "unsigned", "signature": ""},
                                                  {"type": "text", "text": "second"}]},
                {"role": "user", "content": [{"type": "text", "text": "more"}]}]
    sent = _sent(openai_stub, messages)
    assert sent[1] == {"role": "assistant", "content": "answer", "reasoning_content": "I ponder"}
    assert sent[3] == {"role": "assistant", "content": "second"}


def test_streamed_reasoning_is_recorded_and_sent_back_as_the_real_cli_does(openai_stub: OpenAIStub) -> None:
    openai_stub.reply(Reply(reasoning_deltas=["I pon", "der \u00e9"],
                            tool_calls=[("call_r1", "read_file", '{"file_path": "caf\u00e9.txt", "limit": 2}')]))
    model = resolve_model("local/stub-model")
    assert isinstance(model, OpenAIChatModel)
    prompt = {"role": "user", "content": [{"type": "text", "text": "look"}]}
    reply = model.respond([prompt])
    assert reply.content == [{"type": "thinking", "thinking": "I ponder \u00e9", "signature": ""},
                             {"type": "tool_use", "id": "call_r1", "name": "read_file",
                              "input": {"file_path": "caf\u00e9.txt", "limit": 2}}]
    sent = _sent(openai_stub, [prompt, {"role": "assistant", "content": reply.content}])
    assert sent[1] == {"role": "assistant", "content": None, "tool_calls": [{
        "id": "call_r1", "type": "function",
        "function": {"name": "read_file", "arguments": '{"file_path":"caf\u00e9.txt","limit":2}'}}]}
