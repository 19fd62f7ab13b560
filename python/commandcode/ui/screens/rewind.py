"""The rewind menu: pick a checkpoint, then one of Claude Code's six actions, with a preview.

Rows (`ui/rewind_menu.py: MenuRow`) are newest first: time, the prompt that opened the
checkpoint, how many files it changed or "No code changes"; before them "Redo" when a rewind can
be undone and "/resume <id> (previous session)" after `/clear`. Choosing a checkpoint lists its
actions (restore code and conversation, conversation only, code only, summarize from here,
summarize up to here, cancel; the code actions only where it has tracked edits) with the preview
of the highlighted one beside them. Every action (and "Redo") asks once, naming what it will do;
the answer preselected is the action itself unless the `rewind.confirmDefault` setting is false.
"No" goes back to the actions and says nothing changed. Esc goes back a step, and from the rows
closes the menu. A session without checkpoints says so above what rows it has.

Dismisses with a `MenuChoice`, or None when nothing was chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from ...checkpoints.modes import CANCEL_LABEL, RewindMode
from ..rewind_menu import ROW_CHECKPOINT, ROW_NO_REDO, ROW_REDO, ROW_RESUME, MenuChoice, MenuRow

Preview = Callable[[MenuRow, "RewindMode | None"], str]
CANCEL = "cancel"
YES, NO = "yes", "no"


class RewindScreen(Screen[MenuChoice | None]):
    """The menu. `preview(row, mode)` says what an action would do (a dry run)."""

    CSS_PATH = "rewind.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    def __init__(self, rows: list[MenuRow], preview: Preview, *, confirm_default: bool = False) -> None:
        super().__init__()
        self.rows = rows
        self.preview = preview
        self.confirm_default = confirm_default
        self.stage = "rows"
        self.row: MenuRow | None = None
        self.mode: RewindMode | None = None

    def compose(self) -> ComposeResult:
        yield Static("Rewind: choose the point to go back to", id="title")
        with Horizontal(id="body"):
            yield OptionList(*[Option(row.label, id=str(position)) for position, row in enumerate(self.rows)], id="rows")
            yield OptionList(id="actions")
            with VerticalScroll(id="preview-pane"):
                yield Static("", id="preview", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#actions").display = False
        self._title(self._rows_title())
        rows = self.query_one("#rows", OptionList)
        rows.focus()
        rows.highlighted = 0
        self._row_preview()  # no highlight event comes when row 0 was highlighted already

    def _row_preview(self) -> None:
        """The preview of the highlighted row (its files; Enter chooses what to restore)."""
        index = self.query_one("#rows", OptionList).highlighted
        row = self.rows[index] if index is not None and 0 <= index < len(self.rows) else None
        if row is not None and row.kind == ROW_NO_REDO:
            self._set_preview(_no_redo_text(row))
        else:
            self._set_preview(f"{row.files}. Enter: choose what to restore." if row and row.kind == ROW_CHECKPOINT else "")

    # ---- stages

    def _rows_title(self) -> str:
        if any(row.kind == ROW_CHECKPOINT for row in self.rows):
            return "Rewind: choose the point to go back to"
        return "No checkpoints yet in this session (one opens with each prompt)"

    def _show_actions(self, row: MenuRow, title: str = "") -> None:
        self.stage, self.row, self.mode = "actions", row, None
        actions = self.query_one("#actions", OptionList)
        actions.clear_options()
        actions.add_options([Option(mode.label, id=mode.value) for mode in row.modes] + [Option(CANCEL_LABEL, id=CANCEL)])
        actions.display = True
        self._title(f"{title}Checkpoint {row.number}: {row.prompt or '(no prompt)'}")
        actions.focus()
        actions.highlighted = 0

    def _ask(self, row: MenuRow, mode: RewindMode | None) -> None:
        self.stage, self.row, self.mode = "confirm", row, mode
        actions = self.query_one("#actions", OptionList)
        actions.clear_options()
        action = "redo" if mode is None else mode.label.split()[0].lower()  # "Yes, restore": the title says what
        actions.add_options([Option(f"Yes, {action}", id=YES), Option("No, go back", id=NO)])
        actions.display = True
        if mode is None:
            self._title("Redo: put the code and conversation back as they were before the last rewind? "
                        "Rewinding again can undo it.")
        else:
            self._title(f"{mode.label} at checkpoint {row.number}? /rewind → Redo can undo it.")
        actions.focus()
        actions.highlighted = 0 if self.confirm_default else 1
        self._set_preview(self.preview(row, mode))

    def _title(self, text: str) -> None:
        self.query_one("#title", Static).update(text)

    def _set_preview(self, text: str) -> None:
        self.query_one("#preview", Static).update(text)

    # ---- events

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "rows":
            self._row_preview()
        elif self.stage == "actions" and self.row is not None:
            value = event.option.id
            self._set_preview("" if value == CANCEL else self.preview(self.row, RewindMode(value)))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        value = event.option.id or ""
        if event.option_list.id == "rows":
            row = self.rows[int(value)]
            if row.kind == ROW_RESUME:
                self.dismiss(MenuChoice(row))
            elif row.kind == ROW_REDO:
                self._ask(row, None)
            elif row.kind == ROW_NO_REDO:  # nothing to run: it only says why
                self._set_preview(_no_redo_text(row))
            else:
                self._show_actions(row)
            return
        assert self.row is not None
        if self.stage == "actions":
            if value == CANCEL:
                self.action_back()
                return
            self._ask(self.row, RewindMode(value))
        elif self.stage == "confirm":
            if value == YES:
                self.dismiss(MenuChoice(self.row, self.mode))
            elif self.row.kind == ROW_REDO:
                self.action_back()
            else:
                self._show_actions(self.row, "Nothing changed. ")

    def action_back(self) -> None:
        if self.stage == "rows":
            self.dismiss(None)
            return
        if self.stage == "confirm" and self.row is not None and self.row.kind != ROW_REDO:
            self._show_actions(self.row)
            return
        self.stage, self.row, self.mode = "rows", None, None
        self.query_one("#actions").display = False
        self._title(self._rows_title())
        rows = self.query_one("#rows", OptionList)
        rows.focus()
        if rows.highlighted is None:
            rows.highlighted = 0
        self._row_preview()  # back on the rows: their preview, not an empty pane


def _no_redo_text(row: MenuRow) -> str:
    """Why there is no redo, in lines the narrow preview pane shows whole (it does not wrap)."""
    import textwrap

    return textwrap.fill(row.reason[:1].upper() + row.reason[1:], 44) + "\nTo go back, rewind to a checkpoint instead."
