"""The resume picker: a full-screen list of sessions with a filter box and a preview pane.

Type to filter (name, first and last prompt, full text; the matching snippet is shown); Up/Down
move; Enter resumes (dismisses with the session's `SessionSummary`); Escape leaves (None).
Ctrl+W widens to every worktree of the repository and Ctrl+A to every project (again: back to
this directory); Ctrl+T shows headless sessions; Ctrl+B cycles the git branch filter; Ctrl+S
sorts by recency or relevance; Ctrl+O cycles the source (Command Code, Claude Code, pi, all:
another agent's session is imported when picked); Ctrl+R renames in place; Ctrl+D deletes (after a yes/no question;
never the current session, which is marked). Forks show `fork of <parent>`. A session named exactly what
is typed is listed first. Rows are cut to the pane's width; the key hints wrap, never cut. At most `SHOWN` rows
are drawn (the count says how many match). The first paint reads only the newest `FIRST_PAINT`
rows (a screenful, with a SQL `LIMIT`); the whole list is then loaded in a worker thread and
drawn when it is there, so the first paint does not grow with the catalog.
What it shows and does is `picker_data.PickerData`; this module only draws it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...catalog.summary import SessionSummary
from ...errors import CommandcodeError
from .picker_data import FIRST_PAINT, PickerData, Row, describe

SHOWN = 300
SOURCE_LABELS = {"commandcode": "Command Code", "claude": "Claude Code", "pi": "pi", "all": "every agent"}
SCOPE_LABELS = {"directory": "this directory", "worktrees": "every worktree", "projects": "every project"}


class Question(ModalScreen[bool]):
    """A yes/no question (y/Enter yes, n/Escape no)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("y", "answer(True)", "Yes"), Binding("enter", "answer(True)", "Yes"),
                Binding("n", "answer(False)", "No"), Binding("escape", "answer(False)", "No")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        yield Static(Text(f"{self.question}  [y/n]"), id="question")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class AskName(ModalScreen[str | None]):
    """One line of text (Enter keeps it, Escape cancels)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, prompt: str, value: str) -> None:
        super().__init__()
        self.prompt, self.value = prompt, value

    def compose(self) -> ComposeResult:
        with Vertical(id="ask"):
            yield Static(Text(self.prompt))
            yield Input(value=self.value, id="ask-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class PickerScreen(Screen[SessionSummary | None]):
    """Pick a session to resume."""

    CSS_PATH = "picker.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Leave", priority=True),
        Binding("enter", "pick", "Resume", priority=True),
        Binding("down", "move(1)", "Down", show=False, priority=True),
        Binding("up", "move(-1)", "Up", show=False, priority=True),
        Binding("ctrl+w", "widen('worktrees')", "Worktrees", priority=True),
        Binding("ctrl+a", "widen('projects')", "All projects", priority=True),
        Binding("ctrl+t", "toggle_headless", "Headless", priority=True),
        Binding("ctrl+b", "branch", "Branch", priority=True),
        Binding("ctrl+s", "sort", "Sort", priority=True),
        Binding("ctrl+o", "source", "Source", priority=True),
        Binding("ctrl+r", "rename", "Rename", priority=True),
        Binding("ctrl+d", "delete", "Delete", priority=True),
    ]

    def __init__(self, data: PickerData) -> None:
        super().__init__()
        self.data = data
        data.prefetch(FIRST_PAINT)  # read while the app starts: on_mount finds the first screenful
        self.shown: list[Row] = []
        self.complete = False  # whether the whole list (not only the first screenful) is drawn

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield Input(placeholder="type to filter: name, prompts, full text", id="filter")
        with Horizontal(id="body"):
            yield OptionList(id="sessions")
            yield Static(id="preview")
        yield Static(Text("enter resume · esc leave · ^w worktrees · ^a all projects · ^t headless · ^b branch · "
                          "^s sort · ^o source · ^r rename · ^d delete"), id="keys")

    def on_mount(self) -> None:
        self.query_one("#filter", Input).focus()
        if self.data.loaded():
            self.refresh_rows()
            return
        self._draw(self.data.first_rows(FIRST_PAINT), None)
        # Started once the first frame is drawn: the loading thread would otherwise hold the GIL
        # while that frame is being rendered.
        self.call_after_refresh(self.run_worker, self._load_all, thread=True, exclusive=True, group="load",
                                exit_on_error=False)

    def _load_all(self) -> None:
        """(worker thread) Loads every row of the scope, then draws them on the app's thread."""
        self.data.sessions()
        try:
            self.app.call_from_thread(self._loaded)
        except RuntimeError:  # the picker was left before the list was loaded
            pass

    def _loaded(self) -> None:
        if not self.is_attached:
            return  # the picker was left meanwhile
        selected = self.selected()
        self.refresh_rows(keep=selected.summary.id if selected is not None else None)

    # ------------------------------------------------------------------------------------------
    # Drawing

    def refresh_rows(self, keep: str | None = None) -> None:
        rows = self.data.rows()
        self.complete = True
        self._draw(rows, keep)

    def _draw(self, rows: list[Row], keep: str | None) -> None:
        """Draws `rows` (all that match, or only the first screenful while `complete` is False)."""
        self.shown = rows[:SHOWN]
        listing = self.query_one("#sessions", OptionList)
        listing.clear_options()
        listing.add_options([Option(self._label(row), id=str(index)) for index, row in enumerate(self.shown)])
        if self.shown:
            ids = [row.summary.id for row in self.shown]
            listing.highlighted = ids.index(keep) if keep in ids else 0
        more = f" (showing {SHOWN}; type to narrow)" if len(rows) > SHOWN else ""
        branch = f" · branch {self.data.branch}" if self.data.branch else ""
        headless = " · with headless" if self.data.headless else ""
        headless += f" · source {SOURCE_LABELS[self.data.source]}" if self.data.source != "commandcode" else ""
        count = f"{len(rows)} session(s)" if self.complete or len(rows) < FIRST_PAINT else f"{len(rows)}+ sessions (loading)"
        self.query_one("#status", Static).update(Text(
            f"{count} in {SCOPE_LABELS[self.data.scope]}{more} · sorted by {self.data.sort}"
            f"{branch}{headless}"))
        self._preview()

    def _label(self, row: Row) -> Text:
        summary = row.summary
        current = summary.id == self.data.current_id
        label = Text("● " if current else "  ", style="bold green" if current else "")
        source = self.data.source_of(summary)
        if source != "commandcode":
            label.append(f"[{source}] ", style="cyan")
        label.append(row.title[:70], style="bold" if summary.name else "")
        if summary.lineage:
            label.append(f"  ({summary.lineage})", style="italic")
        if summary.damaged:
            label.append("  [damaged]", style="red")
        label.append(f"  {summary.modified[:16].replace('T', ' ')} · {summary.message_count} msgs", style="dim")
        if summary.git_branch:
            label.append(f" · {summary.git_branch}", style="dim")
        if row.snippet:
            snippet = Text("\n    " + row.snippet[:120], style="dim")
            for start, end in row.spans:
                if end <= 120:
                    snippet.stylize("bold reverse", start + 5, end + 5)
            label.append_text(snippet)
        return label

    def selected(self) -> Row | None:
        index = self.query_one("#sessions", OptionList).highlighted
        return self.shown[index] if index is not None and 0 <= index < len(self.shown) else None

    def _preview(self) -> None:
        row = self.selected()
        preview = self.query_one("#preview", Static)
        if row is None:
            preview.update(Text("No sessions match." if self.data.query else "No sessions here yet."))
            return
        text = Text()
        for label, value in describe(row.summary, current=row.summary.id == self.data.current_id):
            text.append(f"{label}: ", style="bold")
            text.append(" ".join(value.split())[:400] + "\n")
        if row.snippet:
            text.append("match: ", style="bold")
            text.append(row.snippet + "\n")
        preview.update(text)

    # ------------------------------------------------------------------------------------------
    # Events and actions

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.data.query = event.value
            self.refresh_rows()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._preview()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_pick()

    def action_move(self, step: int) -> None:
        listing = self.query_one("#sessions", OptionList)
        if self.shown:
            current = listing.highlighted or 0
            listing.highlighted = max(0, min(len(self.shown) - 1, current + step))
            self._preview()

    def action_pick(self) -> None:
        row = self.selected()
        if row is not None:
            self.dismiss(row.summary)

    def action_leave(self) -> None:
        self.dismiss(None)

    def action_widen(self, scope: str) -> None:
        self.data.widen(scope)
        self.refresh_rows()

    def action_toggle_headless(self) -> None:
        self.data.headless = not self.data.headless
        self.refresh_rows()

    def action_branch(self) -> None:
        self.data.cycle_branch()
        self.refresh_rows()

    def action_sort(self) -> None:
        self.data.toggle_sort()
        self.refresh_rows()

    def action_source(self) -> None:
        self.data.cycle_source()
        self.refresh_rows()

    def action_rename(self) -> None:
        row = self.selected()
        if row is None:
            return
        summary = row.summary

        def done(name: str | None) -> None:
            if name is None:
                return
            try:
                written = self.data.rename(summary, name)
            except CommandcodeError as error:
                self.notify(str(error), severity="error")
                return
            self.notify(f"renamed to {written}")
            self.refresh_rows(keep=summary.id)

        self.app.push_screen(AskName("New name:", summary.name or ""), done)

    def action_delete(self) -> None:
        row = self.selected()
        if row is None:
            return
        summary = row.summary
        if summary.id == self.data.current_id:
            self.notify("the current session cannot be deleted", severity="error")
            return

        def done(yes: bool | None) -> None:
            if not yes:
                return
            try:
                trashed = self.data.delete(summary)
            except (CommandcodeError, OSError) as error:
                self.notify(str(error), severity="error")
                return
            self.notify(f"moved {row.title[:40]} to the trash" if trashed else f"deleted {row.title[:40]}")
            self.refresh_rows()

        self.app.push_screen(Question(f"Delete session {row.title[:50]!r} and its checkpoints?"), done)


def picker_screen(data: PickerData) -> Screen[Any]:
    """The picker screen over `data` (for `run_screen`)."""
    return PickerScreen(data)
