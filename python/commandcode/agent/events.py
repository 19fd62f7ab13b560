"""What a running turn tells its caller as it goes: `TurnEvent`.

`agent.turns.run_turn(prompt, on_event=...)` calls `on_event` with one `TurnEvent` per thing a
front end shows live:

- `"text"`: a text delta of the model's reply (`text`), as it streams;
- `"tool_start"`: a tool call is about to run (`name`, `input`, `tool_use_id`);
- `"tool_end"`: it finished (`name`, `input`, `tool_use_id`, `outcome` text, `is_error`);
- `"notice"`: a one-line message for the user (`text`): a checkpoint notice, a retry, a compaction;
- `"progress"`: what the running tool is doing now, one line (`text`; `tool_use_id`, `name` of the
  running call): a foreground sub-agent's tool call as it starts;
- `"output"`: text to show whole under a call once it ends (`text`, `tool_use_id`): the final
  message of a sub-agent whose agent says `showOutput: true`;
- `"usage"`: one model call's usage (`usage`: `inputTokens`, `outputTokens`, `cacheReadTokens`,
  `cacheWriteTokens`, optional `costUsd`).
- `"assistant"`: one model step's whole assistant message (`message`) once it is complete, and
  `"tool_result"`: the user message carrying a tool's result (`message`); the headless
  `stream-json` output is built from these two.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..values import Frozen

TEXT, TOOL_START, TOOL_END, NOTICE, USAGE = "text", "tool_start", "tool_end", "notice", "usage"
PROGRESS, OUTPUT = "progress", "output"
KINDS = frozenset({TEXT, TOOL_START, TOOL_END, NOTICE, USAGE, PROGRESS, OUTPUT, "assistant", "tool_result"})


class TurnEvent(Frozen):
    """One thing that happened in a running turn (see the module docstring for the fields of each kind)."""

    __slots__ = ("input", "is_error", "kind", "message", "name", "outcome", "text", "tool_use_id", "usage")

    kind: str
    text: str
    name: str
    input: dict[str, Any]
    tool_use_id: str
    outcome: str
    is_error: bool
    usage: dict[str, Any]
    message: dict[str, Any]

    def __init__(self, kind: str, *, text: str = "", name: str = "", input: dict[str, Any] | None = None,
                 tool_use_id: str = "", outcome: str = "", is_error: bool = False,
                 usage: dict[str, Any] | None = None, message: dict[str, Any] | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown turn event kind {kind!r}")
        self._set(kind=kind, text=text, name=name, input=input if input is not None else {}, tool_use_id=tool_use_id,
                  outcome=outcome, is_error=is_error, usage=usage if usage is not None else {},
                  message=message if message is not None else {})


OnEvent = Callable[[TurnEvent], None]
