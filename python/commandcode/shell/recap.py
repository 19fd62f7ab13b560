"""The recent conversation a resumed (or rewound) session shows above its prompt, as Claude Code
and pi do: the last few exchanges of the context the model will see, each prompt whole (two
lines at most) with the size of its reply, how many tool calls it made and whether the user
interrupted it. The reply's words are
not repeated: printed above a new prompt they would read as the answer to it. Pure text from the
message list; `Output.recap` prints it."""

from __future__ import annotations

from typing import Any

from ..sessions.context import INTERRUPTED_BY_USER

EXCHANGES = 3
LINE_WIDTH = 200


class Exchange:
    """One user prompt and what followed it until the next prompt."""

    __slots__ = ("interrupted", "prompt", "reply", "tool_calls")

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt
        self.reply: list[str] = []
        self.tool_calls = 0
        self.interrupted = False  # the user interrupted it (the real CLI's marker follows it)


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [block["text"] for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)]


def _is_prompt(message: dict[str, Any]) -> bool:
    meta = message.get("meta") or {}
    return message.get("role") == "user" and meta.get("source") == "user" and not meta.get("isMeta")


def recent_exchanges(messages: list[dict[str, Any]], count: int = EXCHANGES) -> list[Exchange]:
    """The last `count` exchanges of `messages` (a summary that stands for older ones is left out)."""
    exchanges: list[Exchange] = []
    for message in messages:
        if _is_prompt(message):
            exchanges.append(Exchange("\n".join(_texts(message))))
        elif exchanges and message.get("role") == "user" and _texts(message) == [INTERRUPTED_BY_USER]:
            exchanges[-1].interrupted = True
        elif exchanges and message.get("role") == "assistant":
            exchanges[-1].reply.extend(_texts(message))
            content = message.get("content")
            if isinstance(content, list):
                exchanges[-1].tool_calls += sum(1 for block in content
                                                if isinstance(block, dict) and block.get("type") == "tool_use")
    return exchanges[-count:] if count else []


def _clip(text: str, lines: int) -> list[str]:
    rows = [row[:LINE_WIDTH] + ("…" if len(row) > LINE_WIDTH else "") for row in text.strip().splitlines() if row.strip()]
    return rows[:lines] + (["…"] if len(rows) > lines else [])


def recap_lines(messages: list[dict[str, Any]], count: int = EXCHANGES) -> list[tuple[str, str]]:
    """`(kind, text)` lines to print: `prompt` lines, `reply` lines and a `tools` line per exchange."""
    lines: list[tuple[str, str]] = []
    for exchange in recent_exchanges(messages, count):
        for index, row in enumerate(_clip(exchange.prompt, 2) or ["(empty prompt)"]):
            lines.append(("prompt", ("> " if index == 0 else "  ") + row))
        if exchange.reply:  # the answer's length, not its words: it must never read as a new reply
            words = len(" ".join(exchange.reply).split())
            lines.append(("tools", f"  ⎿ replied ({words} word{'s' if words != 1 else ''})"))
        if exchange.tool_calls:
            lines.append(("tools", f"({exchange.tool_calls} tool call{'s' if exchange.tool_calls != 1 else ''})"))
        if exchange.interrupted:
            lines.append(("tools", "  (interrupted)"))
    return lines
