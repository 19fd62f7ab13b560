"""`SessionNavigation`: moving through a session's tree, a collaborator of `AgentSession` taking
the handle and the model selection: jumping to an entry with a branch summary of the work left
behind, labelling entries, and copying the session (fork: the whole tree and checkpoints; clone:
the active branch only). The work is `agent/branching.py`'s; these run it through the open
session's writer (or one held just for the call).

Who writes a branch summary (`branch_summarizer`): the session's model when it can (a provider's
`Summarizes`, told to summarize the branch being left; a session not opened for turns, as the
CLI's `goto` and `tree` use it, first takes the model it recorded, as a resume would), else the
session's `summarizer` (the offline, extractive one). A provider that fails falls back to the
extractive summary with one notice, so a jump never fails for want of a model."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import CommandcodeError
from ..sessions.fork import CopyResult
from ..sessions.navigate import LeftBehind
from ..sessions.writer import SessionWriter
from .branching import GotoResult, clone_session, fork_session, goto_entry, label_entry, skipped_notice, summary_draft
from .handle import SessionHandle
from .model_switch import ModelSelection
from .providers.base import Summarizes
from .summarize import Summarizer, offline_summary

if TYPE_CHECKING:
    from .runtime import AgentSession

T = TypeVar("T")

BRANCH_INSTRUCTIONS = ("This is a branch of the conversation the user is leaving to continue from an earlier "
                       "point: summarize what was tried on it and learned, so that work is not lost.")


class SessionNavigation:
    """Goto, labels, fork and clone of one session; `summarizer` is the session's (offline by
    default); `open_copy` makes the session object of a fork or clone from what was copied."""

    def __init__(self, handle: SessionHandle, models: ModelSelection, summarizer: Summarizer,
                 open_copy: Callable[[CopyResult], AgentSession]) -> None:
        self._handle = handle
        self._models = models
        self.summarizer = summarizer
        self._open_copy = open_copy

    def summary_by_model(self) -> bool:
        """Whether branch summaries are asked of the model (a provider: it takes a while)."""
        if self.summarizer is offline_summary:
            self._models.adopt_recorded()
        return self.summarizer is offline_summary and isinstance(self._models.model, Summarizes)

    def branch_summarizer(self) -> Summarizer:
        """What writes a branch summary (see the module docstring)."""
        asks_model = self.summary_by_model()  # first: it adopts the recorded model of a session not open
        model = self._models.model
        if not (asks_model and isinstance(model, Summarizes)):
            return self.summarizer
        summarize, fallback, notify = model.summarize, self.summarizer, self._handle.notify

        def by_model(messages: list[dict[str, Any]]) -> str:
            try:
                return str(summarize(messages, BRANCH_INSTRUCTIONS))
            except CommandcodeError as error:
                notify(f"the model did not write the branch summary ({error}); an extractive one is used")
                return fallback(messages)

        return by_model

    def summary_draft(self, entry: str) -> tuple[LeftBehind, str | None]:
        """What a jump to `entry` would leave behind, and the summary `branch_summarizer` writes of it."""
        return summary_draft(self._handle.files, entry, self.branch_summarizer())

    def goto(self, entry: str, *, summary: str | bool | None = None) -> GotoResult:
        """Moves the leaf to `entry`, persisted, with a branch summary of the work left behind
        (a text; True: written by `branch_summarizer`; False: none; None: the `branchSummary` setting)."""
        summarizer, handle = self.branch_summarizer(), self._handle
        return self._with_writer(lambda writer: goto_entry(handle.files, writer, entry, summary=summary,
                                                           summarizer=summarizer, project=handle.project))

    def label(self, entry: str, text: str | None) -> tuple[str, bool]:
        """Labels `entry` (no text: clears its label); returns its id and whether anything changed."""
        return self._with_writer(lambda writer: label_entry(self._handle.files, writer, entry, text))

    def _with_writer(self, action: Callable[[SessionWriter], T]) -> T:
        """Runs `action` with this session's writer, or one held just for it; an open session's
        context is reloaded after (the leaf may have moved)."""
        handle = self._handle
        if handle.open_writer is None:
            with SessionWriter(handle.files, str(handle.cwd)) as writer:
                return action(writer)
        result = action(handle.open_writer)
        handle.reload_context()
        return result

    def fork(self, name: str | None = None) -> AgentSession:
        """A new session holding this one's whole tree and checkpoints (`agent/branching.py`);
        this one is untouched. The result is not open for writing yet."""
        handle = self._handle
        return self._copied(fork_session(handle.files, handle.cwd, name=name))

    def clone(self) -> AgentSession:
        """A new session holding only this one's active branch, without checkpoints."""
        handle = self._handle
        return self._copied(clone_session(handle.files, handle.cwd))

    def _copied(self, result: CopyResult) -> AgentSession:
        notice = skipped_notice(self._handle.files, result)
        if notice is not None:
            self._handle.notify(notice)
        return self._open_copy(result)
