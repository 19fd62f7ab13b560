"""Compaction: older context replaced by a summary, as the real CLI does it (ref §11).

`compact(...)` keeps the newest ~30,000 tokens verbatim (`KEEP_TOKENS`, by the token estimate of
`sessions/context.py`), backed up so the kept part starts at a fresh user turn (not a tool
result) and holds at least the last 3 messages; it summarizes the rest only when that holds at
least 5 non-meta messages. The summary comes from the model when it can write one
(`summarize(messages, instructions)`, a provider), else the offline extractive one (goal,
prompts, tools, files touched). A `compaction` entry is appended at the leaf and committed —
the log is never rewritten — with `summary`, `firstKeptEntryId` (the entry of the first kept
message) and `tokensBefore`; `meta.compaction` keeps `{count, tokensSaved, lastTokensSaved,
lastCompactedAt}` across resumes (written only when the compaction saved tokens).

Automatic compaction runs before a turn once the estimate passes 90 % of the context window.
Fast mode (`/compact-mode fast`) adds two lighter tiers that are not persisted: at 50 % of the
window the model is sent the tool results older than the kept tail (at most a quarter of the
window) trimmed, at 80 % every tool result but the current
turn's (`trimmed_view`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import CommandcodeError
from ..sessions.context import content_blocks, entry_to_message
from ..sessions.meta import read_meta, update_meta
from ..sessions.tokens import estimate_tokens
from ..sessions.writer import SessionWriter
from ..storage.ids import iso_now
from .summarize import offline_summary

AUTO_THRESHOLD = 0.9
FAST_TIERS = (0.5, 0.8)
KEEP_TOKENS = 30_000
MIN_KEPT_MESSAGES = 3
MIN_SUMMARIZED_MESSAGES = 5
TRIMMED = "[older tool output trimmed to save context; run the tool again if you need it]"


class CompactionResult:
    """What one compaction did."""

    __slots__ = ("count", "entry_id", "summarized", "summary", "tokens_after", "tokens_before", "total_saved")

    def __init__(self, *, entry_id: str, summary: str, summarized: int, tokens_before: int, tokens_after: int,
                 count: int, total_saved: int) -> None:
        self.entry_id, self.summary, self.summarized = entry_id, summary, summarized
        self.tokens_before, self.tokens_after = tokens_before, tokens_after
        self.count, self.total_saved = count, total_saved

    @property
    def saved(self) -> int:
        return max(0, self.tokens_before - self.tokens_after)


def _is_fresh_prompt(message: dict[str, Any]) -> bool:
    blocks = content_blocks(message.get("content"))
    meta = message.get("meta") or {}
    return (message.get("role") == "user" and not meta.get("isMeta") and not meta.get("isSummary")
            and bool(blocks) and not any(block.get("type") == "tool_result" for block in blocks))


def kept_start(messages: list[dict[str, Any]], keep_tokens: int = KEEP_TOKENS) -> int | None:
    """The index of the first message kept verbatim, or None when compaction would summarize
    fewer than 5 non-meta messages (or could not start the kept part at a fresh user turn)."""
    kept_tokens, cut = 0, len(messages)
    while cut > 0 and (kept_tokens < keep_tokens or len(messages) - cut < MIN_KEPT_MESSAGES):
        cut -= 1
        kept_tokens += estimate_tokens([messages[cut]])
    while cut > 0 and not _is_fresh_prompt(messages[cut]):
        cut -= 1
    summarized = [message for message in messages[:cut] if not (message.get("meta") or {}).get("isMeta")]
    if cut == 0 or len(summarized) < MIN_SUMMARIZED_MESSAGES:
        return None
    return cut


def offline_compaction_summary(messages: list[dict[str, Any]], instructions: str | None = None) -> str:
    """The offline model's extractive summary; an earlier compaction's summary is carried on."""
    earlier = [block.get("text", "") for message in messages if (message.get("meta") or {}).get("isSummary")
               for block in content_blocks(message.get("content")) if block.get("type") == "text"]
    text = offline_summary(messages)
    if instructions:
        text = f"**Focus requested**\n{instructions.strip()}\n\n{text}"
    if earlier:
        carried = "\n".join(str(part) for part in earlier)[-4000:]
        text += f"\n\n**Earlier summary**\n{carried}"
    return text


Summarize = Callable[[list[dict[str, Any]], str | None], str]


def compact(writer: SessionWriter, messages: list[dict[str, Any]], entry_ids: list[str], *, summarize: Summarize,
            meta_path: Any, persist: bool, instructions: str | None = None,
            keep_tokens: int = KEEP_TOKENS) -> CompactionResult | None:
    """Compacts `messages` (and `entry_ids`, parallel to it) in place; None when there is too
    little to summarize. The entry is committed at once.

    Raises:
        CommandcodeError: the summary could not be written (nothing was appended).
    """
    cut = kept_start(messages, keep_tokens)
    if cut is None:
        return None
    tokens_before = estimate_tokens(messages)
    summary = summarize(messages[:cut], instructions).strip()
    if not summary:
        raise CommandcodeError("the summary came back empty; nothing was compacted")
    first_kept = entry_ids[cut] if cut < len(entry_ids) else ""
    entry_id = writer.append_entry("compaction", {"summary": summary, "firstKeptEntryId": first_kept,
                                                  "tokensBefore": tokens_before})
    writer.commit(force=True)
    summary_message = entry_to_message({"type": "compaction", "id": entry_id, "summary": summary})
    messages[:cut] = [summary_message]
    entry_ids[:cut] = [entry_id]
    tokens_after = estimate_tokens(messages)
    saved = max(0, tokens_before - tokens_after)
    stats = read_meta(meta_path).get("compaction") if persist else None
    stats = stats if isinstance(stats, dict) else {}
    count = int(stats.get("count", 0) or 0) + 1
    total = int(stats.get("tokensSaved", 0) or 0) + saved
    if persist and saved > 0 and writer.exists_on_disk:
        update_meta(meta_path, {"compaction": {"count": count, "tokensSaved": total, "lastTokensSaved": saved,
                                               "lastCompactedAt": iso_now()}})
    return CompactionResult(entry_id=entry_id, summary=summary, summarized=cut, tokens_before=tokens_before,
                            tokens_after=tokens_after, count=count, total_saved=total)


def needs_compaction(messages: list[dict[str, Any]], window: int) -> bool:
    """Whether the estimate passes the automatic threshold (90 % of `window`)."""
    return window > 0 and estimate_tokens(messages) > AUTO_THRESHOLD * window


def trimmed_view(messages: list[dict[str, Any]], window: int) -> list[dict[str, Any]]:
    """What fast mode sends the model (the stored messages are never changed): past 50 % of the
    window, tool results older than the kept tail are trimmed; past 80 %, every tool result
    before the current turn's prompt."""
    if window <= 0:
        return messages
    share = estimate_tokens(messages) / window
    if share < FAST_TIERS[0]:
        return messages
    if share >= FAST_TIERS[1]:
        boundary = next((index for index in range(len(messages) - 1, -1, -1) if _is_fresh_prompt(messages[index])), 0)
    else:  # the kept tail, at most a quarter of the window
        boundary = kept_start(messages, min(KEEP_TOKENS, window // 4)) or 0
    return [_trim(message) if index < boundary else message for index, message in enumerate(messages)]


def _trim(message: dict[str, Any]) -> dict[str, Any]:
    blocks = content_blocks(message.get("content"))
    if not any(block.get("type") == "tool_result" for block in blocks):
        return message
    trimmed = [{**block, "content": [{"type": "text", "text": TRIMMED}]} if block.get("type") == "tool_result" else block
               for block in blocks]
    return {**message, "content": trimmed}
