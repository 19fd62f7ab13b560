"""Small modal questions the full-screen screens ask: a line of text, a branch summary.

- `PromptScreen(question, default)`: one line (Enter keeps it, Escape cancels → None).
- `SummaryScreen(draft, default_keep)`: the summary of the branch a jump leaves, in an editable
  box; "Keep summary" (Ctrl+S) returns the text as edited, "Skip" returns False, Escape returns
  None (no jump). The button focused first follows the `branchSummary` setting.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, TextArea


class PromptScreen(ModalScreen[str | None]):
    """Asks for one line of text."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, default: str = "") -> None:
        super().__init__()
        self.question, self.default = question, default

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question)
            yield Input(value=self.default, id="answer")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class SummaryScreen(ModalScreen[str | bool | None]):
    """Offers the summary of the branch a jump leaves behind: keep (as edited), skip, or cancel."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel jump"), Binding("ctrl+s", "keep", "Keep summary")]

    def __init__(self, draft: str, *, left: int, default_keep: bool) -> None:
        super().__init__()
        self.draft, self.left, self.default_keep = draft, left, default_keep

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label(f"Leaving {self.left} entr{'y' if self.left == 1 else 'ies'} behind. Summarize them? "
                        "(edit the text, Ctrl+S keeps it, Escape cancels the jump)")
            yield TextArea(self.draft, id="summary")
            with Horizontal(classes="buttons"):
                yield Button("Keep summary", id="keep", variant="primary")
                yield Button("Skip summary", id="skip")

    def on_mount(self) -> None:
        self.query_one("#keep" if self.default_keep else "#skip", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "keep":
            self.action_keep()
        else:
            self.dismiss(False)

    def action_keep(self) -> None:
        text = self.query_one("#summary", TextArea).text.strip()
        self.dismiss(text if text else False)

    def action_cancel(self) -> None:
        self.dismiss(None)
