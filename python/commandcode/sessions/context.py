"""The model context: how entries become the messages a model sees (format §4.4, §11).

Owns: `Context` and the message helpers (`content_blocks`, `entry_to_message`, `build_messages`).
Cheap to import: a warm open builds its context here, so what only a request or a display needs
lives beside it (every module a warm open imports costs it ~0.4M instructions of import machinery
plus its own bytecode): the token estimate in `tokens.py`, the repair of tool calls without a
result in `tool_results.py`; `gc` is imported only by a build large enough to pause it.
"""

from ..values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

COMPACTION_PREFIX = (
    "This is an auto-compacted summary of the earlier conversation that ran out of context.\n\n"
)
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"
# The user message that ends an interrupted turn: the real CLI's INTERRUPTED_BY_USER_MESSAGE, which
# it shows as "Interrupted · What should Command Code do instead?" and sends to the model as is.
INTERRUPTED_BY_USER = "Interrupted by user"
# From this many entries on, `build_messages` pauses the cyclic garbage collector. Below it the
# messages are too few containers to set off more than a young-generation collection, while
# importing `gc` alone costs a warm open ~0.24M instructions (callgrind, issue 30).
GC_PAUSE_MIN_ENTRIES = 1000


class Context(Frozen):
    """The model context at the leaf: the entries that produce it and the messages themselves."""

    __slots__ = ("leaf_id", "entry_ids", "messages")
    leaf_id: "str | None"
    entry_ids: "list[str]"
    messages: "list[dict[str, Any]]"

    def __init__(self, leaf_id: "str | None", entry_ids: "list[str]", messages: "list[dict[str, Any]]") -> None:
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


def build_messages(entries: "list[dict[str, Any]]", strip_thinking_until: int) -> "list[dict[str, Any]]":
    """The messages of context entries; thinking is stripped from the first `strip_thinking_until`.

    From `GC_PAUSE_MIN_ENTRIES` entries on, the cyclic garbage collector is paused meanwhile:
    building tens of thousands of acyclic message dicts otherwise triggers repeated full
    collections that cost more than the building itself (measured: 0.57 s → 0.12 s on a 1 GB
    session).
    """
    if len(entries) < GC_PAUSE_MIN_ENTRIES:
        return _messages(entries, strip_thinking_until)
    import gc

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _messages(entries, strip_thinking_until)
    finally:
        if was_enabled:
            gc.enable()


def _messages(entries: "list[dict[str, Any]]", strip_thinking_until: int) -> "list[dict[str, Any]]":
    return [entry_to_message(entry, strip_thinking=position < strip_thinking_until)
            for position, entry in enumerate(entries)]
