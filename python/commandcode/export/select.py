"""What an export contains: which entries, in which order, read from disk in bounded chunks.

Three selections (format doc §10 of the reference; docs/format.md §14):

- `context` (the default, as the real CLI): the context of the active branch, rebuilt as on
  resume: after a compaction only its summary stands in for older history;
- `full` (`--full`): every entry of the active path, root to leaf, through every compaction
  (each compaction's summary appears where it was made);
- `all` (`--branch all`): every entry of the file as a tree: the active path inline, and at each
  branch point the other branches as `BranchOpen … BranchClose` groups (nested the same way; a
  branch with no message in it, only bookkeeping such as labels, is left out).

`Selection.items()` yields message dicts (as `sessions.context.entry_to_message` builds them;
`isMeta` ones dropped) and branch markers, reading entries `CHUNK` at a time, so a 1 GB session
exports in bounded memory. `progress(done, total)` is called after each chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..sessions.context import entry_to_message
from ..sessions.reader import Session

CHUNK = 256
SELECTIONS = ("context", "full", "all")
_MESSAGE_TYPES = frozenset({"message", "compaction", "branch_summary", "custom_message"})
Progress = Callable[[int, int], None]


class BranchOpen:
    """The start of a branch that is not on the active path: `entries` of them, from `timestamp`."""

    __slots__ = ("entries", "entry_id", "timestamp")

    def __init__(self, entry_id: str, timestamp: str) -> None:
        self.entry_id, self.timestamp, self.entries = entry_id, timestamp, 0


class BranchClose:
    """The end of the innermost open branch."""

    __slots__ = ()


Item = dict[str, Any] | BranchOpen | BranchClose
_CLOSE = BranchClose()


class Selection:
    """The entries one export reads, in order (ids and branch markers), and how to read them."""

    def __init__(self, session: Session, mode: str = "context") -> None:
        if mode not in SELECTIONS:
            raise ValueError(f"unknown selection {mode!r}")
        self.session = session
        self.mode = mode
        self.strip_thinking_until = 0
        self.plan: list[str | BranchOpen | BranchClose] = self._plan()

    @property
    def entry_count(self) -> int:
        return sum(1 for step in self.plan if isinstance(step, str))

    def _plan(self) -> list[str | BranchOpen | BranchClose]:
        if self.mode == "context":
            entry_ids, self.strip_thinking_until = self.session.context_plan()
            return list(entry_ids)
        rows = [(row.id, row.parent_id, row.type, row.timestamp) for row in self.session.tree_rows()]
        if self.mode == "full":
            wanted = {row[0] for row in rows if row[2] in _MESSAGE_TYPES}
            return [entry_id for entry_id in self.session.path_ids() if entry_id in wanted]
        return _tree_plan(rows, set(self.session.path_ids()))

    def items(self, progress: Progress | None = None) -> Iterator[Item]:
        """Messages and branch markers in order (entries read `CHUNK` at a time)."""
        total = self.entry_count
        done = 0
        position = 0
        plan = self.plan
        start = 0
        while start < len(plan):
            stop, ids = start, list[str]()
            while stop < len(plan) and len(ids) < CHUNK:
                step = plan[stop]
                if isinstance(step, str):
                    ids.append(step)
                stop += 1
            entries = iter(self.session.read_entries(ids)) if ids else iter(())
            for step in plan[start:stop]:
                if not isinstance(step, str):
                    yield step
                    continue
                entry = next(entries)
                strip = self.mode == "context" and position < self.strip_thinking_until
                position += 1
                if entry.get("type") not in _MESSAGE_TYPES:
                    continue
                message = entry_to_message(entry, strip_thinking=strip)
                meta = message.get("meta")
                if not (isinstance(meta, dict) and meta.get("isMeta")):
                    yield message
            done += len(ids)
            start = stop
            if progress is not None:
                progress(done, total)


def _tree_plan(rows: list[tuple[str, str | None, str, str]], active: set[str]) -> list[str | BranchOpen | BranchClose]:
    """Every entry as a tree walk: from each branch point the other branches first (each as an
    open marker, its own walk and a close marker), then the active (or else newest) child inline."""
    known = {row[0] for row in rows}
    types: dict[str, str] = {}
    stamps: dict[str, str] = {}
    children: dict[str | None, list[str]] = {}
    for entry_id, parent_id, entry_type, timestamp in rows:
        if entry_id in types:
            continue  # a repeated id names its last entry for the walk; show it once
        types[entry_id], stamps[entry_id] = entry_type, timestamp
        children.setdefault(parent_id if parent_id in known else None, []).append(entry_id)
    for kids in children.values():
        kids.sort(key=lambda kid: stamps[kid])  # stable: file order among equal timestamps
    plan: list[str | BranchOpen | BranchClose] = []
    stack: list[tuple[str, str | None]] = [("chain", None)]
    seen: set[str] = set()
    while stack:
        action, node = stack.pop()
        if action == "close":
            plan.append(_CLOSE)
            continue
        if action == "open":
            assert node is not None
            plan.append(BranchOpen(node, stamps[node]))
            continue
        current = node
        while True:
            if current is not None:
                if current in seen:
                    break  # a cycle: each entry is shown once
                seen.add(current)
                if types[current] in _MESSAGE_TYPES:
                    plan.append(current)
            kids = [kid for kid in children.get(current, ()) if kid not in seen]
            if not kids:
                break
            if len(kids) == 1:
                current = kids[0]
                continue
            main = next((kid for kid in kids if kid in active), kids[-1])
            stack.append(("chain", main))
            for other in reversed([kid for kid in kids if kid != main]):
                stack += [("close", None), ("chain", other), ("open", other)]
            break
    _count_branches(plan)
    return _without_empty_branches(plan)


def _count_branches(plan: list[str | BranchOpen | BranchClose]) -> None:
    open_branches: list[BranchOpen] = []
    for step in plan:
        if isinstance(step, BranchOpen):
            open_branches.append(step)
        elif isinstance(step, BranchClose):
            open_branches.pop()
        else:
            for branch in open_branches:
                branch.entries += 1


def _without_empty_branches(plan: list[str | BranchOpen | BranchClose]) -> list[str | BranchOpen | BranchClose]:
    """`plan` without the branches that show nothing (only labels, leaf moves and other
    bookkeeping): an empty "Branch from … (0 entries)" group says nothing to the reader."""
    kept: list[str | BranchOpen | BranchClose] = []
    open_kept: list[bool] = []
    for step in plan:
        if isinstance(step, BranchOpen):
            open_kept.append(step.entries > 0)
            if step.entries > 0:
                kept.append(step)
        elif isinstance(step, BranchClose):
            if open_kept.pop():
                kept.append(step)
        else:
            kept.append(step)
    return kept
