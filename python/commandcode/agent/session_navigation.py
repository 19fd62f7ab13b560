"""The tree-navigation methods of `AgentSession` (mixed into it): jumping to an entry with a
branch summary of the work left behind, and labelling entries. The work is `agent/branching.py`'s;
these run it through the open session's writer (or one held just for the call).

Who writes a branch summary (`branch_summarizer`): the session's model when it can (a provider's
`summarize`, told to summarize the branch being left; a session not opened for turns, as the
CLI's `goto` and `tree` use it, first takes the model it recorded, as a resume would), else the
session's `summarizer` (the offline, extractive one). A provider that fails falls back to the
extractive summary with one notice, so a jump never fails for want of a model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import CommandcodeError
from ..sessions.files import SessionFiles
from ..sessions.navigate import LeftBehind
from ..sessions.reader import Session, open_session
from ..sessions.writer import SessionWriter
from .branching import GotoResult, goto_entry, label_entry, summary_draft
from .providers.base import Model
from .summarize import Summarizer, offline_summary

T = TypeVar("T")

BRANCH_INSTRUCTIONS = ("This is a branch of the conversation the user is leaving to continue from an earlier "
                       "point: summarize what was tried on it and learned, so that work is not lost.")


class NavigationMethods:
    """`AgentSession`'s goto and labels; needs the attributes below from it."""

    files: SessionFiles
    cwd: Path
    summarizer: Summarizer
    model: Model
    notify: Callable[[str], None]
    messages: list[dict[str, Any]]
    _writer: SessionWriter | None
    _model_given: bool

    def reload_context(self) -> None: ...

    def adopt_recorded_model(self, session: Session | None = None) -> None:
        """A session not open for writing (`sessions status`, a goto from the command line) takes
        the model it recorded, as a resume would: once, and only when no model was given."""
        if self._writer is not None or self._model_given or not self.files.transcript.is_file():
            return
        from .model_switch import adopt_model

        recorded = session or open_session(self.files.transcript)
        adopt_model(self, recorded.model, recorded.effort)  # type: ignore[arg-type]
        self._model_given = True  # adopted once; a later open keeps it

    def summary_by_model(self) -> bool:
        """Whether branch summaries are asked of the model (a provider: it takes a while)."""
        if self.summarizer is offline_summary:
            self.adopt_recorded_model()
        return self.summarizer is offline_summary and callable(getattr(self.model, "summarize", None))

    def branch_summarizer(self) -> Summarizer:
        """What writes a branch summary (see the module docstring)."""
        summarize = getattr(self.model, "summarize", None) if self.summary_by_model() else None
        if summarize is None:
            return self.summarizer
        fallback = self.summarizer

        def by_model(messages: list[dict[str, Any]]) -> str:
            try:
                return str(summarize(messages, BRANCH_INSTRUCTIONS))
            except CommandcodeError as error:
                self.notify(f"the model did not write the branch summary ({error}); an extractive one is used")
                return fallback(messages)

        return by_model

    def summary_draft(self, entry: str) -> tuple[LeftBehind, str | None]:
        """What a jump to `entry` would leave behind, and the summary `branch_summarizer` writes of it."""
        return summary_draft(self.files, entry, self.branch_summarizer())

    def goto(self, entry: str, *, summary: str | bool | None = None) -> GotoResult:
        """Moves the leaf to `entry`, persisted, with a branch summary of the work left behind
        (a text; True: written by `branch_summarizer`; False: none; None: the `branchSummary` setting)."""
        summarizer = self.branch_summarizer()
        return self._with_writer(lambda writer: goto_entry(self.files, writer, entry, summary=summary,
                                                           summarizer=summarizer, cwd=self.cwd))

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
        self.reload_context()
        return result
