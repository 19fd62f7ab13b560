"""Our context messages (the transcript's Anthropic-style blocks) as chat-completions messages,
and a streamed reply's chunks back into assistant content blocks.

To the wire: user text and images become a user message; each `tool_result` block becomes a
`tool` message with its `tool_call_id`; assistant text and `tool_use` blocks become one assistant
message with `tool_calls` (arguments as the real CLI's `JSON.stringify` writes them) and, as it
sends them, the text of its thinking blocks that carry a `signature` (or `redactedData`, sent
empty) as `reasoning_content`: thinking streamed by a chat-completions provider is recorded, as
the real CLI records it, with an empty signature, and stays home like the real CLI's.
Tool calls are repaired first as the real CLI does (`with_tool_results`: a synthetic result for a
call that has none, an orphan result left out). From the wire:
text and `reasoning_content` deltas accumulate, tool-call deltas are merged by `index` (several
calls at once), and arguments that are not a JSON object are reported per call id, for the turn
to hand back to the model as a tool error.
"""

from __future__ import annotations

import json
from typing import Any

from ...sessions.context import content_blocks
from ...sessions.tool_results import with_tool_results


def _text_of(blocks: list[dict[str, Any]]) -> str:
    return "\n".join(str(block.get("text", "")) for block in blocks if block.get("type") == "text")


def _stringify(value: Any) -> str:
    """JSON text as the real CLI's `JSON.stringify` writes it: no spaces, characters unescaped."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _reasoning_of(blocks: list[dict[str, Any]]) -> str:
    """What the real CLI sends back of an assistant's thinking (`reasoning_content`): the blocks
    with a `signature` (a block with `redactedData` as empty text); one without either stays home."""
    return "".join("" if block.get("redactedData") else str(block.get("thinking") or "") for block in blocks
                   if block.get("type") == "thinking" and (block.get("signature") or block.get("redactedData")))


def to_chat_messages(messages: list[dict[str, Any]], system: str | None = None) -> list[dict[str, Any]]:
    """The request's `messages`."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in with_tool_results(messages):
        blocks = content_blocks(message.get("content"))
        if message.get("role") == "assistant":
            text = _text_of(blocks)
            calls = [{"id": str(block.get("id")), "type": "function",
                      "function": {"name": str(block.get("name")), "arguments": _stringify(block.get("input") or {})}}
                     for block in blocks if block.get("type") == "tool_use"]
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            reasoning = _reasoning_of(blocks)
            if reasoning:
                entry["reasoning_content"] = reasoning
            if calls:
                entry["tool_calls"] = calls
            if text or calls:
                out.append(entry)
            continue
        parts: list[dict[str, Any]] = []
        for block in blocks:
            kind = block.get("type")
            if kind == "tool_result":
                inner = content_blocks(block.get("content"))
                out.append({"role": "tool", "tool_call_id": str(block.get("tool_use_id")), "content": _text_of(inner)})
            elif kind == "text" and block.get("text"):
                parts.append({"type": "text", "text": str(block["text"])})
            elif kind == "image" and isinstance(block.get("source"), dict):
                source = block["source"]
                parts.append({"type": "image_url",
                              "image_url": {"url": f"data:{source.get('media_type')};base64,{source.get('data')}"}})
        if parts:
            plain = all(part["type"] == "text" for part in parts)
            out.append({"role": "user", "content": "\n".join(part["text"] for part in parts) if plain else parts})
    return out


class ReplyBuilder:
    """Accumulates a streamed (or whole) chat completion into content blocks and usage."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None

    def add_chunk(self, chunk: dict[str, Any]) -> str:
        """Takes one chunk; returns its text delta (may be empty)."""
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        delta_text = ""
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
            delta = choice.get("delta") or choice.get("message") or {}
            if not isinstance(delta, dict):
                continue
            content = delta.get("content")
            if isinstance(content, str) and content:
                self.text.append(content)
                delta_text += content
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                self.reasoning.append(reasoning)
            for position, call in enumerate(delta.get("tool_calls") or []):
                if isinstance(call, dict):
                    self._add_call(call, position)
        return delta_text

    def _add_call(self, call: dict[str, Any], position: int) -> None:
        raw_index = call.get("index")
        index: int = raw_index if isinstance(raw_index, int) else position
        slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": []})
        if call.get("id"):
            slot["id"] = str(call["id"])
        function = call.get("function") or {}
        if isinstance(function, dict):
            if function.get("name") and not slot["name"]:
                slot["name"] = str(function["name"])
            if isinstance(function.get("arguments"), str):
                slot["arguments"].append(function["arguments"])

    def content(self) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """The assistant blocks, and the reason per call id whose arguments did not decode."""
        blocks: list[dict[str, Any]] = []
        if self.reasoning:
            blocks.append({"type": "thinking", "thinking": "".join(self.reasoning), "signature": ""})
        if self.text:
            blocks.append({"type": "text", "text": "".join(self.text)})
        errors: dict[str, str] = {}
        for number, index in enumerate(sorted(self.calls)):
            slot = self.calls[index]
            call_id = slot["id"] or f"call_{number}"
            raw = "".join(slot["arguments"]).strip() or "{}"
            try:
                tool_input = json.loads(raw)
            except ValueError as error:
                tool_input = {}
                errors[call_id] = (f"the arguments of this {slot['name'] or 'tool'} call are not valid JSON "
                                   f"({error}); nothing ran, send the call again with a JSON object")
            else:
                if not isinstance(tool_input, dict):
                    errors[call_id] = f"the arguments of this {slot['name'] or 'tool'} call must be a JSON object"
                    tool_input = {}
            blocks.append({"type": "tool_use", "id": call_id, "name": slot["name"] or "(unnamed)", "input": tool_input})
        return blocks, errors


def usage_record(usage: dict[str, Any] | None, cost: dict[str, float]) -> dict[str, Any]:
    """The transcript's usage object from a chat-completions `usage` (`costUsd` when priced;
    prices per million tokens, cached input at the cacheRead price)."""
    usage = usage or {}
    raw_details = usage.get("prompt_tokens_details")
    details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}

    def number(value: Any) -> int:
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else 0

    prompt = number(usage.get("prompt_tokens"))
    cache_read = number(details.get("cached_tokens", usage.get("cache_read_input_tokens")))
    cache_write = number(details.get("cache_write_tokens", usage.get("cache_creation_input_tokens")))
    record: dict[str, Any] = {"inputTokens": prompt, "outputTokens": number(usage.get("completion_tokens")),
                              "cacheReadTokens": cache_read, "cacheWriteTokens": cache_write}
    if cost:
        uncached = max(0, prompt - cache_read - cache_write)
        dollars = (uncached * cost.get("input", 0) + record["outputTokens"] * cost.get("output", 0)
                   + cache_read * cost.get("cacheRead", cost.get("input", 0))
                   + cache_write * cost.get("cacheWrite", cost.get("input", 0))) / 1_000_000
        record["costUsd"] = round(dollars, 10)
    return record
