"""What the tree navigator shows, without Textual: the session tree flattened into rows.

Owns `TreeModel`: every entry of the session (every branch), laid out by the index
(`Session.tree_layout`: children ordered by time, flattened depth-first, a chain at one depth and
only a fork in the tree indenting) into packed arrays, so no object is built per entry of a
143k-entry session; per-entry facts (id, type, time, role) are fetched for the rows asked for.
Folds and the four filters (default, no tools, user only, labeled only) derive new rows. Text is
read only for the rows asked for (`texts`), so a screen of a 1 GB session reads a screen's worth
of lines. The two filters that ask what a message holds (no tools, user only) are laid out
natively too: the scan already records each message's role, isMeta and whether it is only tool
traffic (`rust/src/layout.rs`'s `Filter`), so no line is read again. Search reads forward from the
cursor until it finds a match. A row holding an `agent` call (or an imported Claude Code
`Agent`/`Task` call) shows the sub-agent runs it started folded into it (agent, description,
status, messages: format §21), read once, when such a row is first shown.
"""

from __future__ import annotations

import re
import sys
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..sessions.context import content_blocks
from ..sessions.format import LEAF_MARKER_TYPE
from ..sessions.reader import Session
from ..sessions.tokens import estimate_tokens

if TYPE_CHECKING:
    from ..sessions.subagent_runs import SubagentRun

FILTERS = ("default", "no tools", "user only", "labeled only")
HIDDEN_BY_DEFAULT = frozenset({"label", "custom"})  # bookkeeping: never sent to the model
_READ_BATCH = 1000


class RowText:
    """What a row says: first line of text and a token count (usage, else the estimate)."""

    __slots__ = ("text", "tokens", "tool")

    def __init__(self, text: str, tokens: int, tool: bool) -> None:
        self.text, self.tokens, self.tool = visible(text), tokens, tool


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
        return RowText(plain_summary(str(entry.get("summary", ""))), 0, False)
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


_CLAUDE_SPAWNS = frozenset({"Agent", "Task"})  # Claude Code's subagent-launching tools


def _messages(count: int) -> str:
    return f"{count} message{'s' if count != 1 else ''}"


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


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def visible(text: str) -> str:
    """`text` safe to draw: control characters (a hostile transcript's escape sequences, bidi
    overrides) shown as `\\xNN` / `\\uNNNN`, never sent to the terminal."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100
                        else f"\\u{ord(match.group()):04x}", text)


_MARKUP = re.compile(r"\*\*|__|`|^\s*(?:#{1,6}\s+|[-*+]\s+|>\s*|\d+[.)]\s+)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _plain(line: str) -> str:
    return _MARKUP.sub("", _LINK.sub(r"\1", line)).strip()


def plain_summary(text: str) -> str:
    """A summary's first line without its markdown (`## Goal`, `**Goal**: ...`, links, code
    marks); a heading alone is joined with the line after it (`Goal: fix the parser`)."""
    lines = [_plain(line) for line in text.splitlines() if _plain(line)]
    if not lines:
        return ""
    first = lines[0]
    heading = re.match(r"^\s*#{1,6}\s|^\s*\*\*[^*]+\*\*:?\s*$", next(line for line in text.splitlines() if line.strip()))
    if heading and len(lines) > 1:
        return f"{first.rstrip(':')}: {lines[1]}"
    return first


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


class EntryInfo:
    """What the index knows of one entry (no line read)."""

    __slots__ = ("id", "parent_id", "type", "timestamp", "role", "is_meta")

    def __init__(self, row: tuple[str, str | None, str, str, int], detail: tuple[str | None, bool, int]) -> None:
        self.id, self.parent_id, self.type, self.timestamp = row[0], row[1], row[2], row[3]
        self.role, self.is_meta = detail[0], detail[1]


class Rows:
    """The shown rows: `rows[i]` is `(entry index, depth)`; packed arrays, no object per row."""

    __slots__ = ("order", "depth", "flags", "size")

    def __init__(self, order: array[int], depth: array[int], flags: bytes | bytearray, size: array[int]) -> None:
        self.order, self.depth, self.flags, self.size = order, depth, flags, size

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, row: int) -> tuple[int, int]:
        return self.order[row], self.depth[row]

    def window(self, start: int, stop: int) -> list[int]:
        return list(self.order[max(0, start):max(0, stop)])


def _u32(data: bytes) -> array[int]:
    values = array("I")
    values.frombytes(data)
    if sys.byteorder != "little":
        values.byteswap()
    return values


class TreeModel:
    """The navigator's rows of one session (reopen the session and build a new model after a write)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.entry_count = session.entry_count
        self.labels = session.labels()
        self.leaf_id = session.leaf_id
        self.folded: set[int] = set()
        self.hidden: dict[int, int] = {}  # a folded entry -> how many rows its fold hides
        self.filter = FILTERS[0]
        self._info: dict[int, EntryInfo] = {}
        self._texts: dict[int, RowText] = {}
        self._layouts: dict[str, Rows] = {}
        self._runs: dict[str, list[SubagentRun]] | None = None  # by the `agent` call that started them
        self._imported: dict[str, list[tuple[str, str, int]]] | None = None  # imported Claude subagents, by call
        self.rows = self._layout("default")

    def _layout(self, name: str) -> Rows:
        """The unfolded rows of filter `name`: the native layout ("labeled only" starts from every
        entry, labels and bookkeeping included, and keeps the labelled ones in `refresh`)."""
        if name not in self._layouts:
            hidden = [] if name == "labeled only" else sorted(HIDDEN_BY_DEFAULT)
            native = "default" if name == "labeled only" else name
            order, depth, flags, size = self.session.tree_layout(hidden, native)
            self._layouts[name] = Rows(_u32(order), _u32(depth), flags, _u32(size))
        return self._layouts[name]

    # ---------------------------------------------------------------------------------------
    # What the index knows, per entry, fetched for the rows asked for

    def info(self, index: int) -> EntryInfo:
        found = self._info.get(index)
        if found is None:
            rows, details = self.session.tree_table(index, index + 1)
            found = self._info[index] = EntryInfo(rows[0], details[0])
        return found

    def id_of(self, index: int) -> str:
        return self.info(index).id

    def position_of(self, entry_id: str | None) -> int | None:
        return self.session.position(entry_id) if entry_id is not None else None

    def on_path(self, row: int) -> bool:
        return bool(self.rows.flags[row] & 1)

    # ---------------------------------------------------------------------------------------
    # Rows

    def refresh(self) -> None:
        """Rebuilds `rows` from the filter's layout and the folds."""
        base = self._layout(self.filter)
        labelled = {self.position_of(entry_id) for entry_id in self.labels} if self.filter == "labeled only" else None
        self.hidden = {}
        if labelled is None and not self.folded:
            self.rows = base
            return
        order, depth, size = array("I"), array("I"), array("I")
        flags = bytearray()
        open_rows: list[tuple[int, int]] = []  # (base row where a kept subtree ends, kept row)
        row, count = 0, len(base)
        while row < count:
            while open_rows and open_rows[-1][0] <= row:
                _end, kept = open_rows.pop()
                size[kept] = len(order) - kept - 1
            index = base.order[row]
            keep = labelled is None or index in labelled
            if keep:
                open_rows.append((row + base.size[row] + 1, len(order)))
                order.append(index)
                depth.append(base.depth[row])
                flags.append(base.flags[row])
                size.append(0)
            if index in self.folded:
                self.hidden[index] = int(base.size[row])
            row += base.size[row] + 1 if index in self.folded else 1
        while open_rows:
            _end, kept = open_rows.pop()
            size[kept] = len(order) - kept - 1
        self.rows = Rows(order, depth, flags, size)

    def cycle_filter(self) -> str:
        self.filter = FILTERS[(FILTERS.index(self.filter) + 1) % len(FILTERS)]
        self.refresh()
        return self.filter

    def toggle_fold(self, row: int) -> bool:
        """Folds (or unfolds) what lies under the entry of `row`; False when nothing does."""
        index = self.rows.order[row]
        if not self.rows.flags[row] & 2:
            return False
        self.folded.symmetric_difference_update({index})
        self.refresh()
        return True

    def hidden_under(self, row: int) -> int:
        """How many rows a fold at `row` hides (in the unfolded layout of the filter)."""
        base = self._layout(self.filter)
        index = self.rows.order[row]
        for position in range(len(base)):
            if base.order[position] == index:
                return int(base.size[position])
        return 0

    # ---------------------------------------------------------------------------------------
    # Text, read only for what is asked

    def _read(self, indexes: Iterable[int]) -> None:
        wanted = [index for index in indexes if index not in self._texts]
        for start in range(0, len(wanted), _READ_BATCH):
            batch = wanted[start:start + _READ_BATCH]
            # An id repeated in the file names its last entry; a row of an earlier twin shows that one's text.
            for index, entry in zip(batch, self.session.read_entries([self.id_of(index) for index in batch])):
                self._texts[index] = self._with_runs(entry, describe(entry))

    def _with_runs(self, entry: dict[str, Any], text: RowText) -> RowText:
        """`text` of a row, with the sub-agent runs its `agent` calls started folded in (and those
        an import of Claude Code's subagents wrote under its `Agent`/`Task` calls), and the subagents
        an older import kept as `custom` entries."""
        if entry.get("type") != "message":
            return text
        blocks = content_blocks(_dict(entry.get("message")).get("content"))
        calls = [str(block.get("id")) for block in blocks
                 if block.get("type") == "tool_use" and block.get("name") == "agent"] if text.tool else []
        spawns = [str(block.get("id")) for block in blocks
                  if block.get("type") == "tool_use" and block.get("name") in _CLAUDE_SPAWNS]
        if not calls and not spawns:
            return text
        runs = self._runs_of(calls + spawns)
        folded = [f"{run.agent_type or 'agent'}: {run.description or '(no description)'} · "
                  f"{run.status or 'status unknown'} · {_messages(run.message_count)}" for run in runs]
        if spawns and not runs:  # an older import: its subagents are entries of the session
            folded += [f"{agent_type}: {description} · imported · {_messages(count)}"
                       for call in spawns for agent_type, description, count in self._imported_of().get(call, [])]
        if not folded:
            return text
        return RowText(f"{text.text} ⤷ sub-agent {'; '.join(folded)}", text.tokens, True)

    def _runs_of(self, calls: list[str]) -> list[SubagentRun]:
        if not calls:
            return []
        if self._runs is None:
            from ..sessions.files import SessionFiles
            from ..sessions.subagent_runs import list_subagent_runs

            self._runs = list_subagent_runs(SessionFiles.for_transcript(self.session.path)).by_tool_use()
        return [run for call in calls for run in self._runs.get(call, [])]

    def _imported_of(self) -> dict[str, list[tuple[str, str, int]]]:
        """The subagents an older `import claude` kept as `custom` entries (`interop/convert.py`), by
        the call that launched them: `(agent type, description, messages)`; read once, and only for a
        session whose rows show such a call."""
        if self._imported is None:
            from ..interop.convert import SUBAGENT_TYPE

            self._imported = {}
            rows, _details = self.session.tree_table(0, self.entry_count)
            customs = [row[0] for row in rows if row[2] == "custom"]
            for entry in self.session.read_entries(customs) if customs else []:
                data = _dict(entry.get("data"))
                if entry.get("customType") != SUBAGENT_TYPE or not isinstance(data.get("tool_use_id"), str):
                    continue
                messages = data.get("messages")
                count = len(messages) if isinstance(messages, list) else 0
                self._imported.setdefault(data["tool_use_id"], []).append(
                    (str(data.get("agent_type") or "agent"), str(data.get("description") or "(no description)"), count))
        return self._imported

    def texts(self, indexes: list[int]) -> list[RowText]:
        self._read(indexes)
        return [self._texts[index] for index in indexes]

    @property
    def texts_read(self) -> int:
        return len(self._texts)

    def search(self, query: str, start: int, *, forward: bool = True) -> int | None:
        """The next row (after `start`, wrapping) whose text or label holds `query`, case-insensitively."""
        wanted = query.casefold()
        count = len(self.rows)
        step = 1 if forward else -1
        order = [(start + step * offset) % count for offset in range(1, count + 1)]
        for begin in range(0, len(order), _READ_BATCH):
            chunk = order[begin:begin + _READ_BATCH]
            for row, text in zip(chunk, self.texts([self.rows.order[row] for row in chunk])):
                label = self.labels.get(self.id_of(self.rows.order[row]), "")
                if wanted in text.text.casefold() or wanted in label.casefold():
                    return row
        return None

    def row_of(self, entry_id: str | None) -> int:
        """The row showing `entry_id` (or its nearest shown ancestor); 0 when none."""
        index = self.position_of(entry_id)
        seen: set[int] = set()
        while index is not None and index not in seen:
            try:
                return self.rows.order.index(index)
            except ValueError:
                seen.add(index)
                index = self.position_of(self.info(index).parent_id)
        return 0
