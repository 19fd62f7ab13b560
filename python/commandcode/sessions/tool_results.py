"""The messages as they are sent: tool calls repaired as the real CLI repairs them before every
request (format §4.4). Owns `with_tool_results` and its synthetic result (`NO_RESULT`,
`SYNTHETIC_RESULTS`); kept out of `context.py`, which a warm open imports.
"""

from .context import content_blocks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NO_RESULT = "No result \u2014 the tool call did not complete (interrupted or lost)."
"""The synthetic result the real CLI sends for a tool call that has none (its `prepareForSend`)."""
SYNTHETIC_RESULTS = "synthetic-tool-results"
"""`meta.source` of the message `with_tool_results` inserts."""


def with_tool_results(messages: "list[dict[str, Any]]") -> "list[dict[str, Any]]":
    """The messages as they are sent, tool calls repaired as the real CLI repairs them before
    every request: a `tool_result` whose call is in no earlier assistant message is left out, and
    after an assistant message whose calls have no result (an interrupted or lost call) comes a
    user message of synthetic results (`NO_RESULT`; `meta.source` = `SYNTHETIC_RESULTS`), so a
    strict provider never sees a call without its answer. `messages` itself when nothing needs it."""
    seen: set[str] = set()
    answered: set[str] = set()
    orphans = False
    for message in messages:
        blocks = content_blocks(message.get("content"))
        if message.get("role") == "assistant":
            seen.update(str(block.get("id")) for block in blocks if block.get("type") == "tool_use")
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                if str(block.get("tool_use_id")) in seen:
                    answered.add(str(block.get("tool_use_id")))
                else:
                    orphans = True
    if not orphans and seen <= answered:
        return messages
    out: list[dict[str, Any]] = []
    seen.clear()
    for message in messages:
        blocks = content_blocks(message.get("content"))
        if message.get("role") != "assistant":
            if orphans and any(block.get("type") == "tool_result" for block in blocks):
                message = {**message, "content": [block for block in blocks if block.get("type") != "tool_result"
                                                  or str(block.get("tool_use_id")) in seen]}
            out.append(message)
            continue
        out.append(message)
        calls = [str(block.get("id")) for block in blocks if block.get("type") == "tool_use"]
        seen.update(calls)
        missing = [call for call in calls if call not in answered]
        if missing:
            out.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": [{"type": "text", "text": NO_RESULT}]}
                for call in missing], "meta": {"isMeta": True, "source": SYNTHETIC_RESULTS}})
    return out
