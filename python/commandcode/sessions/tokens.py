"""How many tokens messages take: the one token estimate (`estimate_tokens`: the real CLI's
`ceil(len(JSON.stringify(block)) / 4)` per content block, 1,500 per image) and how full a
context is (`context_tokens`). Kept out of `context.py`, which a warm open imports.
"""

from .context import content_blocks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

IMAGE_TOKENS = 1500


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
