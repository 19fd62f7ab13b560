"""The recent conversation a resumed or rewound session shows (`shell/recap.py`): the last three
exchanges of the context, prompts with the start of their replies and their tool-call counts."""

from __future__ import annotations

from typing import Any

from commandcode.shell.recap import recap_lines, recent_exchanges


def _user(text: str, **meta: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "meta": {"source": "user", **meta}}


def _assistant(text: str, tools: int = 0) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {}} for i in range(tools)]
    return {"role": "assistant", "content": blocks}


def test_the_last_three_exchanges_with_replies_and_tool_counts() -> None:
    messages = [_user(f"prompt {n}") if n % 2 == 0 else _assistant(f"reply {n}") for n in range(10)]
    messages += [_user("run it"), _assistant("", tools=2),
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0"}], "meta": {"source": "tool"}},
                 _assistant("done\n" + "\n".join(f"line {n}" for n in range(9)))]
    assert [exchange.prompt for exchange in recent_exchanges(messages)] == ["prompt 6", "prompt 8", "run it"]
    lines = recap_lines(messages)
    assert lines[:4] == [("prompt", "> prompt 6"), ("tools", "  ⎿ replied (2 words)"), ("prompt", "> prompt 8"),
                         ("tools", "  ⎿ replied (2 words)")]
    assert lines[4:] == [("prompt", "> run it"), ("tools", "  ⎿ replied (19 words)"), ("tools", "(2 tool calls)")]
    assert not any("reply" in text and "replied" not in text for _, text in lines)


def test_meta_and_summary_messages_are_not_prompts_and_nothing_is_nothing() -> None:
    summary = {"role": "user", "content": [{"type": "text", "text": "summary"}], "meta": {"isSummary": True}}
    messages = [summary, _user("reminder", isMeta=True), _user("real"), _assistant("answer")]
    assert recap_lines(messages) == [("prompt", "> real"), ("tools", "  ⎿ replied (1 word)")]
    assert recap_lines([]) == []
