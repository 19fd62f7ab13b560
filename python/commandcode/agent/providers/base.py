"""What the agent loop needs from a model provider: `Model`, and the `ModelReply` it returns.

A provider answers one step: given the context messages, the assistant's next content blocks
and the usage of the call. Tool calls are `tool_use` blocks of the reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class ModelReply:
    """One model step: assistant content blocks plus usage."""

    content: list[dict[str, Any]]
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [block for block in self.content if block.get("type") == "tool_use"]


class Model(Protocol):
    """A model the turn runner can call."""

    model_id: str

    def respond(self, messages: list[dict[str, Any]]) -> ModelReply: ...
