"""The model context: how entries become the messages a model sees (format §4.4, §11).

Owns: `Context`, the message helpers (`content_blocks`, `entry_to_message`, `build_messages`) and
the one token estimate (`estimate_tokens`: the real CLI's `ceil(len(JSON.stringify(block)) / 4)`
per content block, 1,500 per image). Cheap to import: a warm open builds its context here.
"""

import gc

from ..storage.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

COMPACTION_PREFIX = (
    "This is an auto-compacted summary of the earlier conversation that ran out of context.\n\n"
)
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"
IMAGE_TOKENS = 1500
NO_RESULT = "No result \u2014 the tool call did not complete (interrupted or lost)."
"""The synthetic result the real CLI sends for a tool call that has none (its `prepareForSend`)."""
SYNTHETIC_RESULTS = "synthetic-tool-results"
"""`meta.source` of the message `with_tool_results` inserts."""
# The user message that ends an interrupted turn: the real CLI's INTERRUPTED_BY_USER_MESSAGE, which
# it shows as "Interrupted · What should Command Code do instead?" and sends to the model as is.
INTERRUPTED_BY_USER = "Interrupted by user"


class Context(Frozen):
    """The model context at the leaf: the entries that produce it and the messages themselves."""

    __slots__ = ("leaf_id", "entry_ids", "messages")
    leaf_id: str | None
    entry_ids: list[str]
    messages: "list[dict[str, Any]]"

    def __init__(self, leaf_id: str | None, entry_ids: list[str], messages: "list[dict[str, Any]]") -> None:
        self._set(leaf_id=leaf_id, entry_ids=entry_ids, messages=messages)


def content_blocks(content: "Any") -> "list[dict[str, Any]]":
    """Message content as a list of blocks; a plain string becomes one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def entry_to_message(entry: "dict[str, Any]", *, strip_thinking: bool = False) -> "dict[str, Any]":
    """One context entry as the message the model sees (format §4.4 step 4)."""
    entry_type = entry.get("type")
    if entry_type == "compaction":
        return {"role": "user", "content": [{"type": "text", "text": COMPACTION_PREFIX + str(entry.get("summary", ""))}],
                "meta": {"isSummary": True, "summaryEntryId": entry.get("id")}}
    if entry_type == "branch_summary":
        text = BRANCH_SUMMARY_PREFIX + str(entry.get("summary", "")) + BRANCH_SUMMARY_SUFFIX
        return {"role": "user", "content": [{"type": "text", "text": text}],
                "meta": {"isMeta": False, "isSummary": True, "source": "branch-summary", "summaryEntryId": entry.get("id")}}
    if entry_type == "custom_message":
        return {"role": "user", "content": content_blocks(entry.get("content")),
                "meta": {"isMeta": not entry.get("display"), "source": f"mod:{entry.get('customType')}"}}
    message = entry.get("message")
    if not isinstance(message, dict):
        return {"role": "user", "content": [], "meta": {}}
    message = dict(message)
    message["content"] = content_blocks(message.get("content"))
    if strip_thinking and message.get("role") == "assistant":
        message["content"] = [block for block in message["content"] if block.get("type") != "thinking"]
    return message


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


def build_messages(entries: "list[dict[str, Any]]", strip_thinking_until: int) -> "list[dict[str, Any]]":
    """The messages of context entries; thinking is stripped from the first `strip_thinking_until`.

    The cyclic garbage collector is paused meanwhile: building tens of thousands of acyclic
    message dicts otherwise triggers repeated full collections that cost more than the building
    itself (measured: 0.57 s → 0.12 s on a 1 GB session).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return [entry_to_message(entry, strip_thinking=position < strip_thinking_until)
                for position, entry in enumerate(entries)]
    finally:
        if was_enabled:
            gc.enable()


def block_tokens(block: "dict[str, Any]") -> int:
    """The real CLI's estimate for one content block: 1,500 for an image, else
    `ceil(len(JSON.stringify(block)) / 4)`, the length counted in UTF-16 code units as in
    JavaScript (an emoji counts 2)."""
    if block.get("type") == "image":
        return IMAGE_TOKENS
    from ..storage.jsonfmt import dumps_line  # not needed to open a session

    text = dumps_line(block)
    units = len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2
    return -(-units // 4)


def estimate_tokens(messages: "list[dict[str, Any]]") -> int:
    """The real CLI's token estimate of messages: the sum over their content blocks."""
    return sum(block_tokens(block) for message in messages for block in content_blocks(message.get("content")))


USAGE_LOOKBACK = 8  # assistant entries read back for the last reported usage


def _reported(reply: "dict[str, Any]") -> int | None:
    """`usage.inputTokens + outputTokens` of an assistant entry, if the provider reported them."""
    usage = reply.get("usage")
    reported = [usage.get(key) for key in ("inputTokens", "outputTokens")] if isinstance(usage, dict) else []
    counts = [value for value in reported if isinstance(value, int) and not isinstance(value, bool) and value >= 0]
    return sum(counts) if len(counts) == 2 and counts[0] else None


def context_tokens(messages: "list[dict[str, Any]]", entry_ids: list[str],
                   read_entries: "Callable[[list[str]], list[dict[str, Any]]]") -> int:
    """How full the context is, as Claude Code counts it: the provider's own count at the last
    reply that reported one (`usage.inputTokens + outputTokens` of the last assistant entry in
    the context carrying usage; a reply an interrupt cut carries none) plus the estimate of what
    came after it; the estimate alone before any reply, or when that count no longer describes
    what precedes the reply (a summary written after it replaced earlier messages: a compaction,
    a summarizing rewind). `entry_ids` run parallel to `messages`."""
    replies = [index for index in range(len(messages) - 1, -1, -1)
               if messages[index].get("role") == "assistant" and index < len(entry_ids) and entry_ids[index]]
    replies = replies[:USAGE_LOOKBACK]
    if not replies:
        return estimate_tokens(messages)
    summaries = [(position, str(meta.get("summaryEntryId"))) for position, meta in
                 ((position, message.get("meta") or {}) for position, message in enumerate(messages[:replies[0]]))
                 if meta.get("isSummary") and meta.get("summaryEntryId")]
    from ..errors import CommandcodeError  # not needed to open a session

    try:
        entries = read_entries([*(entry_ids[index] for index in replies), *(entry for _, entry in summaries)])
    except (CommandcodeError, LookupError, ValueError, OSError):  # an entry gone: the estimate
        return estimate_tokens(messages)
    found = next(((index, entry) for index, entry in zip(replies, entries, strict=False) if _reported(entry)), None)
    if found is None:
        return estimate_tokens(messages)
    last, reply = found
    stamp = str(reply.get("timestamp", ""))
    if any(position < last and str(entry.get("timestamp", "")) > stamp
           for (position, _), entry in zip(summaries, entries[len(replies):], strict=False)):
        return estimate_tokens(messages)
    return (_reported(reply) or 0) + estimate_tokens(messages[last + 1:])
