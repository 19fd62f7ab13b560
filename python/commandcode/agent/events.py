"""`TurnEvent`: what a running turn tells its front end as it goes.

Kinds: `text` (a piece of the assistant's reply, in order), `tool_start` (a tool call about to
run: `tool`, `input`), `tool_end` (its outcome: `tool`, `text`, `is_error`), `notice` (a one-line
message for the user) and `usage` (the model call's usage, `data`). The shell renders them as they
come; `run_turn(prompt, on_event=...)` calls the callback from the thread that runs the turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TEXT, TOOL_START, TOOL_END, NOTICE, USAGE = "text", "tool_start", "tool_end", "notice", "usage"
KINDS = (TEXT, TOOL_START, TOOL_END, NOTICE, USAGE)


class TurnEvent:
    """One event of a running turn (see the module docstring for the fields each kind sets)."""

    __slots__ = ("data", "input", "is_error", "kind", "text", "tool", "tool_use_id")

    def __init__(self, kind: str, *, text: str = "", tool: str | None = None, input: dict[str, Any] | None = None,
                 is_error: bool = False, tool_use_id: str | None = None, data: dict[str, Any] | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown turn event kind {kind!r}")
        self.kind = kind
        self.text = text
        self.tool = tool
        self.input = input if input is not None else {}
        self.is_error = is_error
        self.tool_use_id = tool_use_id
        self.data = data if data is not None else {}

    def __repr__(self) -> str:
        return f"TurnEvent({self.kind!r}, tool={self.tool!r}, text={self.text[:40]!r})"


OnEvent = Callable[[TurnEvent], None]
