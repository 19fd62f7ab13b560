"""The tree-navigation methods of `AgentSession` (mixed into it): jumping to an entry with a
branch summary of the work left behind, and labelling entries. The work is `agent/branching.py`'s;
these run it through the open session's writer (or one held just for the call)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..sessions.files import SessionFiles
from ..sessions.navigate import LeftBehind
from ..sessions.reader import open_session
from ..sessions.writer import SessionWriter
from .branching import GotoResult, goto_entry, label_entry, summary_draft
from .summarize import Summarizer

T = TypeVar("T")


class NavigationMethods:
    """`AgentSession`'s goto and labels; needs the attributes below from it."""

    files: SessionFiles
    cwd: Path
    summarizer: Summarizer
    messages: list[dict[str, Any]]
    _writer: SessionWriter | None

    def summary_draft(self, entry: str) -> tuple[LeftBehind, str | None]:
        """What a jump to `entry` would leave behind, and the summary `summarizer` writes of it."""
        return summary_draft(self.files, entry, self.summarizer)

    def goto(self, entry: str, *, summary: str | bool | None = None) -> GotoResult:
        """Moves the leaf to `entry`, persisted, with a branch summary of the work left behind
        (a text; True: written by `summarizer`; False: none; None: the `branchSummary` setting)."""
        return self._with_writer(lambda writer: goto_entry(self.files, writer, entry, summary=summary,
                                                           summarizer=self.summarizer, cwd=self.cwd))

    def label(self, entry: str, text: str | None) -> tuple[str, bool]:
        """Labels `entry` (no text: clears its label); returns its id and whether anything changed."""
        return self._with_writer(lambda writer: label_entry(self.files, writer, entry, text))

    def _with_writer(self, action: Callable[[SessionWriter], T]) -> T:
        """Runs `action` with this session's writer, or one held just for it; an open session's
        context is reloaded after (the leaf may have moved)."""
        if self._writer is None:
            with SessionWriter(self.files, str(self.cwd)) as writer:
                return action(writer)
        result = action(self._writer)
        self.messages = open_session(self.files.transcript).context().messages
        return result
