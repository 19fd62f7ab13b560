"""What the tree navigator shows, without Textual: the session tree flattened into rows.

Owns `TreeModel`: every entry of the session (every branch) from the index (`Session.tree_table`,
no line read), children ordered by time, flattened depth-first into display rows — a chain stays
at one depth and only a fork in the tree indents — with folds and the four filters (default,
no tools, user only, labeled only). Text is read only for the rows asked for (`texts`), so a
screen of a 1 GB session reads a screen's worth of lines; the two filters that need to know
what a message holds (no tools, user only) read message lines once, in batches, when first
chosen. Search reads forward from the cursor until it finds a match.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..sessions.context import content_blocks, estimate_tokens
from ..sessions.format import LEAF_MARKER_TYPE
from ..sessions.reader import Session

FILTERS = ("default", "no tools", "user only", "labeled only")
HIDDEN_BY_DEFAULT = frozenset({"label", "custom"})  # bookkeeping: never sent to the model
_READ_BATCH = 1000


class RowText:
    """What a row says: first line of text and a token count (usage, else the estimate)."""

    __slots__ = ("text", "tokens", "tool")

    def __init__(self, text: str, tokens: int, tool: bool) -> None:
        self.text, self.tokens, self.tool = text, tokens, tool


def describe(entry: dict[str, Any]) -> RowText:
    """The text, tokens and tool-ness of one entry, as a row shows it."""
    kind = entry.get("type")
    if kind == "message":
        message = _dict(entry.get("message"))
        blocks = content_blocks(message.get("content"))
        texts = [str(block.get("text", "")) for block in blocks if block.get("type") == "text"]
        tools = [block for block in blocks if block.get("type") in ("tool_use", "tool_result")]
        tool = bool(tools) and not any(text.strip() for text in texts)
        if tool:
            first = tools[0]
            texts = [f"{first.get('name') or 'tool result'} {_brief(first.get('input') or first.get('content'))}"]
        usage = _dict(entry.get("usage"))
        tokens = usage.get("outputTokens")
        if not isinstance(tokens, int):
            tokens = estimate_tokens([message]) if message else 0
        return RowText(_first_line(" ".join(texts)), tokens, tool)
    if kind in ("compaction", "branch_summary"):
        return RowText(_first_line(str(entry.get("summary", ""))), 0, False)
    if kind == "label":
        return RowText(f"label {entry.get('targetId')}: {entry.get('label', '(cleared)')}", 0, False)
    if kind == "session_info":
        return RowText(f"name: {entry.get('name', '')}", 0, False)
    if kind in ("model_change", "effort_change"):
        return RowText(str(entry.get("model") or entry.get("effort") or ""), 0, False)
    if kind == "custom":
        data = _dict(entry.get("data"))
        if entry.get("customType") == LEAF_MARKER_TYPE:
            return RowText(f"leaf moved ({data.get('reason', '?')})", 0, False)
        return RowText(str(entry.get("customType", "")), 0, False)
    if kind == "custom_message":
        return RowText(_first_line(" ".join(str(b.get("text", "")) for b in content_blocks(entry.get("content")))), 0, False)
    return RowText("", 0, False)


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _brief(value: object) -> str:
    if isinstance(value, dict):
        path = value.get("file_path") or value.get("path") or value.get("command")
        if isinstance(path, str):
            return path
    if isinstance(value, str):
        return value
    return ""


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


class TreeModel:
    """The navigator's rows of one session (reopen the session and build a new model after a write)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        rows, details = session.tree_table()
        self.ids = [row[0] for row in rows]
        self.types = [row[2] for row in rows]
        self.times = [row[3] for row in rows]
        self.roles = [detail[0] for detail in details]
        self.meta = [detail[1] for detail in details]
        self.labels = session.labels()
        self.leaf_id = session.leaf_id
        position = {entry_id: index for index, entry_id in enumerate(self.ids)}  # a repeated id names its last
        self.position = position
        self.children: list[list[int]] = [[] for _ in rows]
        self.roots: list[int] = []
        for index, row in enumerate(rows):
            parent = position.get(row[1]) if row[1] is not None else None
            if parent is None or parent == index:
                self.roots.append(index)
            else:
                self.children[parent].append(index)
        for kids in self.children:
            if len(kids) > 1:
                kids.sort(key=lambda child: (self.times[child], child))
        self.roots.sort(key=lambda root: (self.times[root], root))
        self.active = {position[entry_id] for entry_id in session.path_ids() if entry_id in position}
        self.folded: set[int] = set()
        self.filter = FILTERS[0]
        self._texts: dict[int, RowText] = {}
        self._tools_known = False
        self.rows: list[tuple[int, int]] = []  # (entry index, depth)
        self.refresh()

    # ---------------------------------------------------------------------------------------
    # Rows

    def shown(self, index: int) -> bool:
        kind = self.types[index]
        if self.filter == "labeled only":
            return self.ids[index] in self.labels
        if kind in HIDDEN_BY_DEFAULT:
            return False
        if self.filter == "user only":
            return kind == "message" and self.roles[index] == "user" and not self.meta[index] and not self._is_tool(index)
        if self.filter == "no tools":
            return not (kind == "message" and self._is_tool(index))
        return True

    def _is_tool(self, index: int) -> bool:
        text = self._texts.get(index)
        return text is not None and text.tool

    def refresh(self) -> None:
        """Rebuilds `rows` from the tree, the folds and the filter (depth-first, iteratively)."""
        if self.filter in ("no tools", "user only") and not self._tools_known:
            self._read([index for index, kind in enumerate(self.types) if kind == "message"])
            self._tools_known = True
        rows: list[tuple[int, int]] = []
        stack: list[tuple[int, int]] = [(root, 0 if len(self.roots) == 1 else 1) for root in reversed(self.roots)]
        while stack:
            index, depth = stack.pop()
            if self.shown(index):
                rows.append((index, depth))
            if index in self.folded:
                continue
            kids = self.children[index]
            child_depth = depth + 1 if len(kids) > 1 else depth
            stack.extend((child, child_depth) for child in reversed(kids))
        self.rows = rows

    def cycle_filter(self) -> str:
        self.filter = FILTERS[(FILTERS.index(self.filter) + 1) % len(FILTERS)]
        self.refresh()
        return self.filter

    def toggle_fold(self, index: int) -> bool:
        """Folds (or unfolds) what lies under `index`; False when it has nothing under it."""
        if not self.children[index]:
            return False
        self.folded.symmetric_difference_update({index})
        self.refresh()
        return True

    def hidden_under(self, index: int) -> int:
        """How many entries a fold at `index` hides."""
        count, stack = 0, list(self.children[index])
        while stack:
            node = stack.pop()
            count += 1
            stack.extend(self.children[node])
        return count

    # ---------------------------------------------------------------------------------------
    # Text, read only for what is asked

    def _read(self, indexes: Iterable[int]) -> None:
        wanted = [index for index in indexes if index not in self._texts]
        for start in range(0, len(wanted), _READ_BATCH):
            batch = wanted[start:start + _READ_BATCH]
            # An id repeated in the file names its last entry; a row of an earlier twin shows that one's text.
            for index, entry in zip(batch, self.session.read_entries([self.ids[index] for index in batch])):
                self._texts[index] = describe(entry)

    def texts(self, indexes: list[int]) -> list[RowText]:
        self._read(indexes)
        return [self._texts[index] for index in indexes]

    @property
    def texts_read(self) -> int:
        return len(self._texts)

    def search(self, query: str, start: int, *, forward: bool = True) -> int | None:
        """The next row (after `start`, wrapping) whose text holds `query`, case-insensitively."""
        wanted = query.casefold()
        count = len(self.rows)
        order = [(start + step) % count for step in range(1, count + 1)] if forward else \
                [(start - step) % count for step in range(1, count + 1)]
        for begin in range(0, len(order), _READ_BATCH):
            chunk = order[begin:begin + _READ_BATCH]
            for row, text in zip(chunk, self.texts([self.rows[row][0] for row in chunk])):
                label = self.labels.get(self.ids[self.rows[row][0]], "")
                if wanted in text.text.casefold() or wanted in label.casefold():
                    return row
        return None

    def row_of(self, entry_id: str | None) -> int:
        """The row showing `entry_id` (or its nearest shown ancestor); 0 when none."""
        index = self.position.get(entry_id) if entry_id is not None else None
        shown = {entry: row for row, (entry, _depth) in enumerate(self.rows)}
        seen: set[int] = set()
        while index is not None and index not in seen:
            if index in shown:
                return shown[index]
            seen.add(index)
            parent_id = self.session.parent_of(self.ids[index])
            index = self.position.get(parent_id) if parent_id is not None else None
        return 0
