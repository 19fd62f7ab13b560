"""`TreeScreen`: the full-screen session-tree navigator (`/tree`, `commandcode tree REF`).

Every branch of the session, children by time, the active path bold and the leaf marked `◆`
(`ui/widgets/tree_view.py` draws it; `ui/tree_model.py` holds the rows). Keys, shown in the
footer: Enter jumps to the selected entry (the leaf moves, persisted through
`agent.navigation.goto`; leaving a branch offers its summary — keep as edited, skip, or cancel — the
first choice from the `branchSummary` setting; a provider writes the draft in a worker thread
while the screen stays live), Space folds or unfolds what lies under an entry,
`/` searches text and `n` finds the next match, `l` attaches or edits a label (empty clears it),
`L` clears it, `f` cycles the filter (default, no tools, user only, labeled only), `q` or Escape
leaves. The screen dismisses with a line saying what changed (None when nothing did).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...config.context import ProjectContext
from ...errors import CommandcodeError
from ...sessions.reader import open_session
from ..tree_model import TreeModel, visible
from ..widgets.tree_view import TreeView
from .dialogs import PromptScreen, SummaryScreen

if TYPE_CHECKING:
    from ...agent.runtime import AgentSession
    from ...sessions.navigate import LeftBehind


TITLE_NAME_CHARS = 60  # the most of the name the title shows; a narrower screen shows less (`_title`)


class TreeScreen(Screen[str | None]):
    """Navigates one session's tree; dismisses with what it changed."""

    CSS_PATH = "tree.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "jump", "Jump"),
        Binding("space", "fold", "Fold"),
        Binding("slash", "search", "Search"),
        Binding("n", "next_match", "Next"),
        Binding("l", "label", "Label"),
        Binding("L", "clear_label", "Unlabel"),
        Binding("f", "cycle_filter", "Filter"),
        Binding("q,escape", "leave", "Leave"),
    ]

    def __init__(self, agent: AgentSession, project: ProjectContext | None = None) -> None:
        super().__init__()
        self.agent = agent
        self.project = project if project is not None else agent.handle.project  # the caller's, else the session's
        self.model = TreeModel(open_session(agent.files.transcript, tail=False))
        self.changes: list[str] = []
        self.query_text = ""
        self._drafting = False

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="title", markup=False)  # names and errors come from files
        yield TreeView(self.model, id="tree")
        yield Static("", id="status", markup=False)
        yield Footer()

    @property
    def view(self) -> TreeView:
        return self.query_one("#tree", TreeView)

    def on_mount(self) -> None:
        self.view.sync(self.model.row_of(self.model.leaf_id))
        self.view.focus()

    def _title(self) -> str:
        """The id, the name as far as it fits, the counts and the filter: the counts and the
        filter always whole (the name gives way), at any width."""
        tail = f" · {self.model.entry_count:,} entries · filter: {self.model.filter}"
        head = self.agent.session_id[:8]
        room = min(TITLE_NAME_CHARS, (self.app.size.width or 80) - 2 - len(head) - len(tail) - 3)
        name = visible(self.model.session.name or "")
        if room < 2:
            name = ""
        elif len(name) > room:
            name = name[:room - 1] + "…"
        return head + (f" · {name}" if name else "") + tail

    def on_resize(self) -> None:
        self.query_one("#title", Static).update(self._title())

    def _status(self, text: str) -> None:
        self.query_one("#status", Static).update(visible(text))

    def _selected_id(self) -> str | None:
        index = self.view.selected
        return self.model.id_of(index) if index is not None else None

    def _reload(self, select: str | None) -> None:
        old = self.model
        self.model = TreeModel(open_session(self.agent.files.transcript, tail=False))
        self.model.folded = {index for index in old.folded if index < self.model.entry_count}
        if old.filter != self.model.filter:
            self.model.filter = old.filter
        self.model.refresh()
        self.view.model = self.model
        self.view.sync(self.model.row_of(select))
        self.query_one("#title", Static).update(self._title())

    # ---------------------------------------------------------------------------------------
    # Jumping

    def action_jump(self) -> None:
        entry = self._selected_id()
        if entry is None:
            return
        if entry == self.model.leaf_id:
            self._status(f"the session is already at {entry}")
            return
        if self._drafting:
            self._status("still asking the model for the summary…")
            return
        if self.agent.navigation.summary_by_model():  # a provider takes a while: the screen stays live meanwhile
            self._drafting = True
            self._status("asking the model for a summary of the branch left behind…")
            self.run_worker(lambda: self._draft_in_thread(entry), thread=True, exclusive=True, group="summary")
            return
        try:
            behind, draft = self.agent.navigation.summary_draft(entry)
        except (CommandcodeError, OSError) as error:  # one line in the status bar, never a traceback
            self._status(f"error: {error}")
            return
        self._offer(entry, behind, draft)

    def _draft_in_thread(self, entry: str) -> None:
        to_status_bar = lambda text: self.app.call_from_thread(self._status, text)  # noqa: E731
        try:  # a fallback's notice goes to the status bar, not over the screen
            with self.agent.handle.notices_to(to_status_bar):
                behind, draft = self.agent.navigation.summary_draft(entry)
        except (CommandcodeError, OSError) as error:
            self.app.call_from_thread(self._draft_failed, error)
            return
        self.app.call_from_thread(self._offer, entry, behind, draft)

    def _draft_failed(self, error: Exception) -> None:
        self._drafting = False
        self._status(f"error: {error}")

    def _offer(self, entry: str, behind: LeftBehind, draft: str | None) -> None:
        self._drafting = False
        if draft is None:
            self._goto(entry, False)
            return
        default_keep = self.project.settings().branch_summary
        self.app.push_screen(SummaryScreen(draft, left=len(behind.entry_ids), default_keep=default_keep),
                             callback=lambda choice: self._after_summary(entry, choice))

    def _after_summary(self, entry: str, choice: str | bool | None) -> None:
        if choice is None:
            self._status("jump cancelled; nothing written")
            return
        self._goto(entry, choice)

    def _goto(self, entry: str, summary: str | bool) -> None:
        try:
            result = self.agent.navigation.goto(entry, summary=summary)
        except (CommandcodeError, OSError) as error:  # one line in the status bar, never a traceback
            self._status(f"error: {error}")
            return
        note = f" with a summary of {result.left_entries} entries left behind" if result.summary_entry_id else ""
        self.changes.append(f"moved to entry {entry}{note}")
        self.dismiss("; ".join(self.changes))

    # ---------------------------------------------------------------------------------------
    # Folding, filtering, searching

    def action_fold(self) -> None:
        index = self.view.selected
        if index is None:
            return
        row = self.view.cursor
        if self.model.toggle_fold(row):
            folded = index in self.model.folded
            self._status(f"folded {self.model.hidden_under(self.model.row_of(self.model.id_of(index)))} rows"
                         if folded else "unfolded")
            self.view.sync()
        else:
            self._status("nothing to fold under this entry")

    def action_cycle_filter(self) -> None:
        selected = self._selected_id()
        self._status(f"filter: {self.model.cycle_filter()}")
        self.view.sync(self.model.row_of(selected))
        self.query_one("#title", Static).update(self._title())

    def action_search(self) -> None:
        self.app.push_screen(PromptScreen("Search for", self.query_text), callback=self._after_search)

    def _after_search(self, query: str | None) -> None:
        if query is None or not query.strip():
            return
        self.query_text = query.strip()
        self.action_next_match()

    def action_next_match(self) -> None:
        if not self.query_text:
            self._status("no search yet: press /")
            return
        if not self.model.rows:
            return
        row = self.model.search(self.query_text, self.view.cursor)
        if row is None:
            self._status(f"no match for {self.query_text!r}")
        else:
            self.view.cursor = row
            self._status(f"match for {self.query_text!r}")

    # ---------------------------------------------------------------------------------------
    # Labels

    def action_label(self) -> None:
        entry = self._selected_id()
        if entry is None:
            return
        current = self.model.labels.get(entry, "")
        self.app.push_screen(PromptScreen(f"Label for {entry} (empty clears it)", current),
                             callback=lambda text: self._set_label(entry, text))

    def action_clear_label(self) -> None:
        entry = self._selected_id()
        if entry is not None:
            self._set_label(entry, "")

    def _set_label(self, entry: str, text: str | None) -> None:
        if text is None:
            return
        try:
            _target, changed = self.agent.navigation.label(entry, text or None)
        except (CommandcodeError, OSError) as error:  # one line in the status bar, never a traceback
            self._status(f"error: {error}")
            return
        if not changed:
            self._status("label unchanged")
            return
        self.changes.append(f"labelled {entry}" if text.strip() else f"cleared the label of {entry}")
        self._status(self.changes[-1])
        self._reload(entry)

    def action_leave(self) -> None:
        self.dismiss("; ".join(self.changes) or None)
