"""`TreeView`: the session tree as a virtual list (Textual's line API).

Owns the drawing of `ui/tree_model.py`'s rows: only the lines on screen are rendered, and only
their entries' text is read (one batched read per screen), so scrolling a 143k-entry session
never loads its history. Each row: a marker (`●` on the active path, `○` off it, `▸` folded,
`◆` the leaf), the indent of its branch, the role or entry type, the label (a fold's
`(+N hidden)` with it), the first line of text, the time and the tokens. The cursor row is highlighted; rows of the active path are bold.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..tree_model import TreeModel, visible

_CURSOR = Style(reverse=True)
_ACTIVE = Style(bold=True)
_OFF = Style(dim=True)
_LABEL = Style(color="yellow", bold=True)


class TreeView(ScrollView, can_focus=True):
    """The rows of a `TreeModel`, with a cursor."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "edge(0)", "First", show=False),
        Binding("end,G", "edge(1)", "Last", show=False),
    ]

    cursor: reactive[int] = reactive(0)

    def __init__(self, model: TreeModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self.sync()

    def sync(self, cursor: int | None = None) -> None:
        """Takes the model's rows as they are now (after a filter, fold or reload)."""
        self.virtual_size = Size(self.size.width or 80, len(self.model.rows))
        if cursor is not None:
            self.cursor = cursor
        self.cursor = max(0, min(self.cursor, len(self.model.rows) - 1))
        self.scroll_to_cursor()
        self.call_after_refresh(self.scroll_to_cursor)  # before the first layout the height is unknown
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        """A new size (the first layout too): the cursor row stays on screen."""
        del event
        self.virtual_size = Size(self.size.width or 80, len(self.model.rows))
        self.scroll_to_cursor()

    @property
    def selected(self) -> int | None:
        """The entry index under the cursor (None when no row is shown)."""
        return self.model.rows[self.cursor][0] if self.model.rows else None

    def watch_cursor(self, old: int, new: int) -> None:
        self.scroll_to_cursor()
        self.refresh()

    def scroll_to_cursor(self) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)

    def action_move(self, step: int) -> None:
        self.cursor = max(0, min(len(self.model.rows) - 1, self.cursor + step))

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(1, self.scrollable_content_region.height - 1))

    def action_edge(self, end: int) -> None:
        self.cursor = len(self.model.rows) - 1 if end else 0

    def render_lines(self, crop):  # type: ignore[no-untyped-def]
        """Reads the text of every row about to be drawn in one batch, then draws them."""
        top = int(self.scroll_y) + crop.y
        self.model.texts(self.model.rows.window(top, top + crop.height))
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        row = int(self.scroll_y) + y
        width = self.scrollable_content_region.width
        if row >= len(self.model.rows):
            return Strip.blank(width, Style())
        index, depth = self.model.rows[row]
        model = self.model
        info = model.info(index)
        entry_id = info.id
        shown_id = visible(entry_id)
        text = model.texts([index])[0]
        active = model.on_path(row)
        marker = "◆" if entry_id == model.leaf_id else "▸" if index in model.folded else "●" if active else "○"
        kind = info.role or info.type
        if info.type == "message" and text.tool:
            kind = f"{kind}·tool"
        time = visible(info.timestamp[11:19] if len(info.timestamp) >= 19 else info.timestamp)
        tokens = f"{text.tokens} tok" if text.tokens else ""
        left = f"{'  ' * min(depth, 30)}{marker} {shown_id} {visible(kind):<14} "
        right = f" {time} {tokens:>9}"
        label = model.labels.get(entry_id)
        label_text = f"[{visible(label)}] " if label else ""
        hidden = model.hidden.get(index) if index in model.folded else None
        if hidden is not None:  # a fold says what it hides
            label_text += f"(+{hidden:,} hidden) "
        room = max(0, width - len(left) - len(right) - len(label_text))
        body = text.text[:room].ljust(room)
        base = _ACTIVE if active else _OFF
        if row == self.cursor:
            base = base + _CURSOR
        segments = [Segment(left, base)]
        if label_text:
            segments.append(Segment(label_text, base + _LABEL))
        segments += [Segment(body, base), Segment(right, base)]
        return Strip(segments).crop(0, width).extend_cell_length(width, base)
