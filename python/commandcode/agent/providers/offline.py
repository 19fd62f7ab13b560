"""The built-in offline model: deterministic, no network, no keys.

Its reply text streams in token-sized chunks (a word's first four characters with the spaces
before them, then the next four…), each after `COMMANDCODE_OFFLINE_TOKEN_MS` milliseconds (0 by
default), as a served model's does.

A prompt line `call TOOL_NAME {JSON input}` makes the model call that tool with that input; the
calls run one per model step, in the order written. A line `also call TOOL_NAME {JSON input}`
joins the step of the call before it (one model step with several tool calls, as a served model
emits parallel calls). A sub-agent's prompt (the `agent` tool's `prompt`) is scripted the same
way, so a sub-agent run is as deterministic as the parent's; `{{agent_id}}` in a call's input
stands for the newest `agent_id: …` an earlier tool result of the turn gave (a background run's
id, which the script cannot know). After the last tool result the model answers
with a short summary of what the tools did. It reads the session's system prompt for one thing:
the scratchpad path, which it writes for `$COMMANDCODE_SCRATCHPAD` in a file tool's input. A `call` line whose input is not a JSON object gets a
reply naming the line, and no tool runs. Any other prompt gets a short deterministic reply.
Its summaries (compaction, rewinds) are `agent.summarize.offline_summary`.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...sessions.context import content_blocks
from ...sessions.tokens import estimate_tokens
from ..summarize import first_line as _first_line
from ..system_prompt import scratchpad_in
from .base import ModelReply, OnText, check_cancel

MODEL_ID = "commandcode/offline"
CONTEXT_WINDOW = 200_000
_TOKEN = re.compile(r"\s*\S{1,4}|\s+")  # about a token each: what a served model streams per chunk
_AGENT_ID = re.compile(r"agent_id: ([A-Za-z0-9_-]+)")
_CALL_LINE = re.compile(r"^\s*(also\s+)?call\s+([A-Za-z_][A-Za-z0-9_]*)\s*(.*?)\s*$")


@dataclass(frozen=True)
class ToolCall:
    """A tool the prompt asked for."""

    name: str
    input: dict[str, Any]
    joins_previous: bool = False  # an `also call` line: same model step as the call before


def parse_tool_calls(prompt: str) -> list[ToolCall]:
    """The `call TOOL {JSON}` lines of a prompt, in order.

    Raises:
        ValueError: a `call` line's input is not a JSON object (one-line message naming the line).
    """
    calls: list[ToolCall] = []
    for number, line in enumerate(prompt.splitlines(), start=1):
        match = _CALL_LINE.match(line)
        if not match:
            continue
        also, name, raw_input = bool(match.group(1)), match.group(2), match.group(3) or "{}"
        try:
            tool_input = json.loads(raw_input, parse_constant=_reject_constant, parse_float=_finite_float)
        except ValueError as error:
            reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
            raise ValueError(f"line {number} of the prompt: the input of `call {name}` is not valid JSON ({reason})") from None
        if not isinstance(tool_input, dict):
            raise ValueError(f"line {number} of the prompt: the input of `call {name}` must be a JSON object")
        calls.append(ToolCall(name, tool_input, also and bool(calls)))
    return calls


def _steps(calls: list[ToolCall]) -> list[list[int]]:
    """The indexes of `calls` grouped by model step (an `also call` joins the step before)."""
    steps: list[list[int]] = []
    for index, call in enumerate(calls):
        if call.joins_previous and steps:
            steps[-1].append(index)
        else:
            steps.append([index])
    return steps


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text} is out of range")
    return value


def _last_prompt(messages: list[dict[str, Any]]) -> tuple[str, int]:
    """The text of the newest user prompt and the index of its message."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "user" or (message.get("meta") or {}).get("isMeta"):
            continue
        texts = [block["text"] for block in content_blocks(message.get("content"))
                 if block.get("type") == "text" and isinstance(block.get("text"), str)]
        if texts and not any(block.get("type") == "tool_result" for block in content_blocks(message.get("content"))):
            return "\n".join(texts), index
    return "", -1


class OfflineModel:
    """The deterministic built-in model."""

    model_id = MODEL_ID
    context_window = CONTEXT_WINDOW

    def respond(self, messages: list[dict[str, Any]], *, on_text: OnText | None = None,
                cancel: threading.Event | None = None, system: str | None = None,
                tools: Sequence[dict[str, Any]] | None = None) -> ModelReply:
        """The next assistant step for this context; its text goes to `on_text` token by token.
        The scratchpad the system prompt advertises stands in for `$COMMANDCODE_SCRATCHPAD` in
        the file tools' inputs (the shell tool has it in its environment). `tools` is not read:
        the prompt's script calls what it names, and the turn refuses a tool it did not offer."""
        from ...config.env import offline_token_seconds

        del tools
        check_cancel(cancel)
        reply = self._respond(messages, scratchpad_in(system))
        delay = offline_token_seconds()
        if on_text is not None:
            for block in reply.content:
                if block.get("type") == "text":
                    for piece in _TOKEN.findall(str(block.get("text", ""))):
                        if delay and cancel is not None:
                            cancel.wait(delay)
                        elif delay:
                            time.sleep(delay)
                        check_cancel(cancel)
                        on_text(piece)
        check_cancel(cancel)
        return reply

    def _respond(self, messages: list[dict[str, Any]], scratchpad: str | None = None) -> ModelReply:
        prompt, prompt_index = _last_prompt(messages)
        usage = {"inputTokens": estimate_tokens(messages), "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0}
        try:
            calls = parse_tool_calls(prompt)
        except ValueError as error:
            return self._reply([{"type": "text", "text": f"I could not run the tools you asked for: {error}"}], usage)
        results = [block for message in messages[prompt_index + 1:] if message.get("role") == "user"
                   for block in content_blocks(message.get("content")) if block.get("type") == "tool_result"]
        if len(results) < len(calls):
            step = next(indexes for indexes in _steps(calls) if indexes[-1] >= len(results))
            ids = _AGENT_ID.findall("\n".join(_result_text(result) for result in results))
            blocks = []
            for index in step:
                call = calls[index]
                tool_input = call.input if call.name == "bash" else _with_scratchpad(call.input, scratchpad)
                if ids:
                    tool_input = _replaced(tool_input, "{{agent_id}}", ids[-1])
                blocks.append({"type": "tool_use", "id": f"call_{prompt_index:04d}_{index:03d}", "name": call.name,
                               "input": tool_input})
            return self._reply(blocks, usage)
        if calls:
            lines = [f"- {call.name}: {_first_line(_result_text(result))}" for call, result in zip(calls, results)]
            return self._reply([{"type": "text", "text": f"Ran {len(calls)} tool call(s):\n" + "\n".join(lines)}], usage)
        first_line = prompt.strip().splitlines()[0] if prompt.strip() else ""
        return self._reply([{"type": "text", "text": f"Offline model reply. You said: {first_line}"}], usage)

    @staticmethod
    def _reply(content: list[dict[str, Any]], usage: dict[str, Any]) -> ModelReply:
        usage = dict(usage)
        usage["outputTokens"] = estimate_tokens([{"content": content}])
        return ModelReply(content, usage)


def _replaced(tool_input: dict[str, Any], placeholder: str, value: str) -> dict[str, Any]:
    return {key: item.replace(placeholder, value) if isinstance(item, str) else item
            for key, item in tool_input.items()}


def _with_scratchpad(tool_input: dict[str, Any], scratchpad: str | None) -> dict[str, Any]:
    """`tool_input` with `$COMMANDCODE_SCRATCHPAD` (or `${COMMANDCODE_SCRATCHPAD}`) in its string
    values replaced by the advertised scratchpad path (unchanged without one)."""
    if not scratchpad:
        return tool_input
    return {key: value.replace("${COMMANDCODE_SCRATCHPAD}", scratchpad).replace("$COMMANDCODE_SCRATCHPAD", scratchpad)
            if isinstance(value, str) else value for key, value in tool_input.items()}


def _result_text(result: dict[str, Any]) -> str:
    return "\n".join(str(block.get("text", "")) for block in content_blocks(result.get("content")) if block.get("type") == "text")


