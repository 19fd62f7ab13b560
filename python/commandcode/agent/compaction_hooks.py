"""`SessionCompaction`: how a session uses compaction (agent/compaction.py), a collaborator of
the turns (`agent/turns.py`) taking the handle and the model selection: `/compact`, the automatic one
before a turn past 90 % of the window, and fast mode's trimmed view; the summary is the model's
own when it can write one (a provider), else the offline extractive one. The window is the
settings' `contextWindow` when set (a positive whole number), else the model's. The kept tail
is the newest 30,000 tokens, or a third of a window smaller than 90,000. After each compaction the
scratchpad's manifest is put back into the context (in memory only), and so it is for a resumed
session whose context starts at a compaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import CommandcodeError
from ..sessions.meta import read_meta
from .compaction import (
    KEEP_TOKENS,
    CompactionResult,
    compact,
    needs_compaction,
    offline_compaction_summary,
    trimmed_view,
)
from .events import OnEvent, TurnEvent
from .handle import SessionHandle
from .model_switch import ModelSelection
from .providers.base import Summarizes


class SessionCompaction:
    """`/compact`, the automatic compaction before a turn, fast mode's view and the totals of one
    session; `manifest` gives the scratchpad's manifest put back after each compaction."""

    def __init__(self, handle: SessionHandle, models: ModelSelection, manifest: Callable[[], str | None]) -> None:
        self._handle = handle
        self._models = models
        self._manifest = manifest
        self.mode = "full"  # "fast": also trim old tool output at 50 % and 80 % (not persisted)
        self.saved = 0  # tokens this process's compactions saved

    def set_mode(self, mode: str) -> None:
        """`full` (summarize) or `fast` (also trim old tool output); for this process only."""
        self.mode = mode

    def window(self) -> int:
        """The model's context window: the settings' `contextWindow`, else the model's. Asked when
        a turn starts or compacts and when the status is recomputed (`/status`, after a turn), each
        a point where the session's context is refreshed: the files as they are now."""
        configured = self._handle.project.refresh().settings().get("contextWindow")
        if isinstance(configured, int) and not isinstance(configured, bool) and configured > 0:
            return configured
        window = self._models.model.context_window
        return window if isinstance(window, int) and window > 0 else 0

    def totals(self) -> dict[str, Any]:
        """`meta.compaction` (`count`, `tokensSaved`, ...) over every run of the session ({} when
        none saved anything); this process's share is `saved`."""
        stats = read_meta(self._handle.files.meta).get("compaction") if self._handle.persist else None
        return dict(stats) if isinstance(stats, dict) else {}

    def compact(self, instructions: str | None = None) -> CompactionResult | None:
        """`/compact [instructions]`: summarizes the older context now (agent/compaction.py);
        None when there is too little to summarize.

        Raises:
            CommandcodeError: the model could not write the summary (nothing was appended).
        """
        handle = self._handle
        writer = handle.writer()
        window = self.window()
        keep = min(KEEP_TOKENS, window // 3) if window >= 3 else KEEP_TOKENS  # a small window keeps a third of it
        model = self._models.model
        summarize = model.summarize if isinstance(model, Summarizes) else offline_compaction_summary
        result = compact(writer, handle.messages, handle.entry_ids, summarize=summarize, meta_path=handle.files.meta,
                         persist=handle.persist, instructions=instructions, keep_tokens=keep)
        if result is not None:
            self.saved += result.saved
            self._put_back_manifest()
        return result

    def _put_back_manifest(self) -> None:
        """After a compaction: the scratchpad's bounded manifest (names, sizes, times) goes into the
        context right after the summary, as a hidden user message that is not written to the
        transcript (the real CLI injects it the same way: no disk format), so the model still knows
        which working files exist. Its entry is the compaction's (compaction never cuts at it)."""
        handle = self._handle
        manifest = self._manifest()
        if manifest is None or not handle.messages:
            return
        handle.messages.insert(1, {"role": "user", "content": [{"type": "text", "text": manifest}],
                                   "meta": {"isMeta": True, "source": "scratchpad-manifest"}})
        handle.entry_ids.insert(1, handle.entry_ids[0] if handle.entry_ids else "")

    def put_back_manifest_on_resume(self) -> None:
        """A resumed session whose context starts at a compaction's summary gets the manifest back
        too (it was never on disk): the model of a resumed session knows its working files as well."""
        messages = self._handle.messages
        first = messages[0] if messages else None
        meta = first.get("meta") if isinstance(first, dict) else None
        if isinstance(meta, dict) and meta.get("isSummary") and meta.get("source") != "branch-summary":
            self._put_back_manifest()

    def auto(self, on_event: OnEvent | None) -> None:
        """Compacts before a turn when the context passes 90 % of the window; says so."""
        window = self.window()
        if not needs_compaction(self._handle.messages, window):
            return
        notify = self._handle.notify
        try:
            result = self.compact()
        except CommandcodeError as error:  # the turn still runs; the provider may refuse it as too long
            text = f"automatic compaction failed: {error}; the context was left as it is"
            notify(text) if on_event is None else on_event(TurnEvent("notice", text=text))
            return
        if result is not None:
            text = (f"context was over 90% of the {window:,}-token window: compacted {result.summarized} messages, "
                    f"{result.tokens_before:,} → {result.tokens_after:,} tokens")
            notify(text) if on_event is None else on_event(TurnEvent("notice", text=text))

    def view(self) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None:
        """Fast mode's trimmed view of the messages (None in the default mode)."""
        if self.mode != "fast":
            return None
        window = self.window()

        def trimmed(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return trimmed_view(messages, window)

        return trimmed
