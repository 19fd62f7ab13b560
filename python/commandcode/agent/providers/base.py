"""What the agent loop needs from a model provider: `Model`, and the `ModelReply` it returns.

A provider answers one step: given the context messages, the assistant's next content blocks
and the usage of the call. Tool calls are `tool_use` blocks of the reply.

`system` is the session's system prompt (`agent.system_prompt`: the working directory and the
scratchpad); a provider sends it as its system message, None means the provider's default.
`tools` are the tool specs offered for this step (`agent.tool_specs` shape: name, description,
input schema); None means the file and shell tools (`TOOL_SPECS`). A sub-agent is offered its
agent's grant, the parent session the spawn tools too (`agent/subagents/`).

Streaming and interruption: `respond(messages, on_text=..., cancel=...)` calls `on_text` with
each text delta as it arrives, and when the `cancel` event is set it stops promptly (closing the
connection of a streaming provider) and raises `errors.TurnInterrupted`. A provider raises
`errors.ProviderError` (one line, never a key in it) when the request fails.

Optional capabilities are declared protocols, checked with `isinstance` (never by probing for an
attribute): `Summarizes` (writes compaction and branch summaries itself), `WritesTitles`
(suggests a session title) and `Reasons` (takes a reasoning `effort`). A model without one gets
the offline fallback (an extractive summary, a title from the first prompt, no effort sent).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ...errors import TurnInterrupted

OnText = Callable[[str], None]


@dataclass(frozen=True)
class ModelReply:
    """One model step: assistant content blocks plus usage."""

    content: list[dict[str, Any]]
    usage: dict[str, Any] = field(default_factory=dict)
    input_errors: dict[str, str] = field(default_factory=dict)
    """Why the input of a `tool_use` (by id) could not be decoded (bad JSON from the model);
    such a call runs no tool, the model gets the reason as a tool error."""

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [block for block in self.content if block.get("type") == "tool_use"]


class Model(Protocol):
    """A model the turn runner can call. `model_id` is what transcripts record
    (`provider/model`); `context_window` the tokens it takes (compaction aims under it)."""

    model_id: str
    context_window: int

    def respond(self, messages: list[dict[str, Any]], *, on_text: OnText | None = None,
                cancel: threading.Event | None = None, system: str | None = None,
                tools: Sequence[dict[str, Any]] | None = None) -> ModelReply: ...


@runtime_checkable
class Summarizes(Protocol):
    """A model that writes summaries (compaction's, a branch's), following `instructions` if given.
    Raises `errors.CommandcodeError` when it cannot (the caller falls back or reports it)."""

    def summarize(self, messages: list[dict[str, Any]], instructions: str | None = None) -> str: ...


@runtime_checkable
class WritesTitles(Protocol):
    """A model that suggests a session title for a bare `/rename` (an empty answer: none)."""

    def suggest_title(self, messages: list[dict[str, Any]]) -> str | None: ...


@runtime_checkable
class Reasons(Protocol):
    """A model that takes a reasoning effort (low … max) into its requests; None: its default."""

    effort: str | None


def check_cancel(cancel: threading.Event | None) -> None:
    """Raises `TurnInterrupted` when `cancel` is set."""
    if cancel is not None and cancel.is_set():
        raise TurnInterrupted("interrupted")
