"""How an `AgentSession` uses compaction (agent/compaction.py): `/compact`, the automatic one
before a turn past 90 % of the window, and fast mode's trimmed view; the summary is the model's
own when it can write one (a provider), else the offline extractive one. The window is the
settings' `contextWindow` when set (a positive whole number), else the model's. The kept tail
is the newest 30,000 tokens, or a third of a window smaller than 90,000. After each compaction the
scratchpad's manifest is put back into the context (in memory only), and so it is for a resumed
session whose context starts at a compaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..config.settings import load_settings
from ..errors import CommandcodeError
from .compaction import (
    KEEP_TOKENS,
    CompactionResult,
    compact,
    needs_compaction,
    offline_compaction_summary,
    trimmed_view,
)
from .events import OnEvent, TurnEvent

if TYPE_CHECKING:
    from .runtime import AgentSession


def context_window_of(agent: AgentSession) -> int:
    configured = load_settings(agent.cwd).get("contextWindow")
    if isinstance(configured, int) and not isinstance(configured, bool) and configured > 0:
        return configured
    window = getattr(agent.model, "context_window", 0)
    return window if isinstance(window, int) and window > 0 else 0


def _summarizer(agent: AgentSession) -> Callable[[list[dict[str, Any]], str | None], str]:
    summarize = getattr(agent.model, "summarize", None)
    return summarize if callable(summarize) else offline_compaction_summary


def compact_session(agent: AgentSession, instructions: str | None = None) -> CompactionResult | None:
    writer = agent._require_writer()
    window = context_window_of(agent)
    keep = min(KEEP_TOKENS, window // 3) if window >= 3 else KEEP_TOKENS  # a small window keeps a third of it
    result = compact(writer, agent.messages, agent.entry_ids, summarize=_summarizer(agent), meta_path=agent.files.meta,
                     persist=agent.persist, instructions=instructions, keep_tokens=keep)
    if result is not None:
        agent.compaction_saved += result.saved
        _put_back_manifest(agent)
    return result


def _put_back_manifest(agent: AgentSession) -> None:
    """After a compaction: the scratchpad's bounded manifest (names, sizes, times) goes into the
    context right after the summary, as a hidden user message that is not written to the
    transcript (the real CLI injects it the same way: no disk format), so the model still knows
    which working files exist. Its entry is the compaction's (compaction never cuts at it)."""
    manifest = agent.scratchpad_manifest()
    if manifest is None or not agent.messages:
        return
    agent.messages.insert(1, {"role": "user", "content": [{"type": "text", "text": manifest}],
                              "meta": {"isMeta": True, "source": "scratchpad-manifest"}})
    agent.entry_ids.insert(1, agent.entry_ids[0] if agent.entry_ids else "")


def put_back_manifest_on_resume(agent: AgentSession) -> None:
    """A resumed session whose context starts at a compaction's summary gets the manifest back
    too (it was never on disk): the model of a resumed session knows its working files as well."""
    first = agent.messages[0] if agent.messages else None
    meta = first.get("meta") if isinstance(first, dict) else None
    if isinstance(meta, dict) and meta.get("isSummary") and meta.get("source") != "branch-summary":
        _put_back_manifest(agent)


def auto_compact(agent: AgentSession, on_event: OnEvent | None) -> None:
    """Compacts before a turn when the context passes 90 % of the window; says so."""
    window = context_window_of(agent)
    if not needs_compaction(agent.messages, window):
        return
    try:
        result = compact_session(agent)
    except CommandcodeError as error:  # the turn still runs; the provider may refuse it as too long
        text = f"automatic compaction failed: {error}; the context was left as it is"
        agent.notify(text) if on_event is None else on_event(TurnEvent("notice", text=text))
        return
    if result is not None:
        text = (f"context was over 90% of the {window:,}-token window: compacted {result.summarized} messages, "
                f"{result.tokens_before:,} → {result.tokens_after:,} tokens")
        agent.notify(text) if on_event is None else on_event(TurnEvent("notice", text=text))


def fast_view(agent: AgentSession) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None:
    """Fast mode's trimmed view of the messages (None in the default mode)."""
    if agent.compact_mode != "fast":
        return None
    window = context_window_of(agent)

    def view(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return trimmed_view(messages, window)

    return view
