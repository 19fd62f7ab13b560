"""Moving around a session's tree: labels, jumps (goto) and the branch a jump leaves behind.

- `find_entry(session, ref)`: an entry by its id or a unique prefix of it (at least 4 hex).
- `left_behind(session, target)`: the entries of the active path after the common ancestor of
  the leaf and `target` — the work a jump leaves — and the files they read and modified.
- `write_label(writer, target, text)`: a real-CLI `label` entry (no text clears the label).
- `write_goto(writer, target, summary)`: the leaf moves to `target` and the move is persisted
  as rewinds persist theirs (format §4.4): a `commandcode.leaf` custom entry under the target,
  or, when a summary of the branch left behind is kept, a real-CLI `branch_summary` entry under
  it (`fromId`: the old leaf; `details`: the files read and modified), which is then the leaf.
  Both tools resume at the target.

Nothing here writes the summary text: the caller passes it (agent/branching.py asks the model).
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidSessionError, UsageError
from ..values import Frozen
from .context import build_messages, content_blocks
from .format import MIN_ID_PREFIX, clean_name
from .reader import Session
from .writer import SessionWriter

READ_TOOLS = frozenset({"read_file"})
MODIFY_TOOLS = frozenset({"write_file", "edit_file"})
SUMMARY_ENTRY_LIMIT = 4000
"""At most this many of the newest entries left behind are summarized (their files all count)."""


def find_entry(session: Session, reference: str) -> str:
    """The id of the entry `reference` names: an exact entry id, else a unique id prefix.

    Raises:
        InvalidSessionError: no entry, or several, match.
    """
    wanted = reference.strip()
    if not wanted:
        raise UsageError("empty entry reference", hint="pass an entry id from `commandcode sessions tree REF`")
    if session.has_entry(wanted):
        return wanted
    if len(wanted) >= MIN_ID_PREFIX:
        matches = sorted({row.id for row in session.tree_rows() if row.id.startswith(wanted)})
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise InvalidSessionError(f"{wanted!r} is a prefix of {len(matches)} entries: {', '.join(matches[:6])}",
                                      hint="type more characters of the entry id")
    raise InvalidSessionError(f"no entry {wanted!r} in session {session.id}",
                              hint=f"`commandcode sessions tree {session.id}` lists the entries")


def ancestors(session: Session, entry_id: str) -> list[str]:
    """`entry_id` and its ancestors, root first (stops at an unknown parent or a cycle)."""
    chain: list[str] = []
    seen: set[str] = set()
    current: str | None = entry_id
    while current is not None and current not in seen and session.has_entry(current):
        seen.add(current)
        chain.append(current)
        current = session.parent_of(current)
    chain.reverse()
    return chain


WORK_TYPES = frozenset({"message", "compaction", "branch_summary", "custom_message"})
"""Entry types that are conversation: what a branch summary has to say something about."""


class LeftBehind(Frozen):
    """The branch a jump leaves: its entry ids (after the common ancestor, oldest first), the
    common ancestor (None: the jump leaves everything), the files those entries read and
    modified, and whether any of them is conversation (`has_work`: a message, compaction, branch
    summary or custom message; labels, leaf moves, names and model changes alone are bookkeeping,
    with nothing to summarize)."""

    __slots__ = ("entry_ids", "common_ancestor", "read_files", "modified_files", "has_work")
    entry_ids: list[str]
    common_ancestor: str | None
    read_files: list[str]
    modified_files: list[str]
    has_work: bool

    def __init__(self, entry_ids: list[str], common_ancestor: str | None, read_files: list[str],
                 modified_files: list[str], has_work: bool) -> None:
        self._set(entry_ids=entry_ids, common_ancestor=common_ancestor, read_files=read_files,
                  modified_files=modified_files, has_work=has_work)


def left_behind(session: Session, target: str) -> LeftBehind:
    """What a jump from the leaf to `target` leaves behind (stopping at the common ancestor)."""
    on_target_path = set(ancestors(session, target))
    path = session.path_ids()
    split = 0
    for index, entry_id in enumerate(path):
        if entry_id in on_target_path:
            split = index + 1
    left = path[split:]
    read: list[str] = []
    modified: list[str] = []
    has_work = False
    for start in range(0, len(left), 2000):
        for entry in session.read_entries(left[start:start + 2000]):
            has_work = has_work or entry.get("type") in WORK_TYPES
            _collect_files(entry, read, modified)
    return LeftBehind(left, path[split - 1] if split else None, read, modified, has_work)


def _collect_files(entry: dict[str, Any], read: list[str], modified: list[str]) -> None:
    message = entry.get("message")
    if entry.get("type") != "message" or not isinstance(message, dict) or message.get("role") != "assistant":
        return
    for block in content_blocks(message.get("content")):
        if block.get("type") != "tool_use":
            continue
        raw_input = block.get("input")
        tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        path = tool_input.get("file_path") or tool_input.get("path")
        if not isinstance(path, str):
            continue
        bucket = read if block.get("name") in READ_TOOLS else modified if block.get("name") in MODIFY_TOOLS else None
        if bucket is not None and path not in bucket:
            bucket.append(path)


def left_messages(session: Session, behind: LeftBehind) -> list[dict[str, Any]]:
    """The messages of the branch left behind (its newest `SUMMARY_ENTRY_LIMIT` entries), for a
    summarizer."""
    ids = behind.entry_ids[-SUMMARY_ENTRY_LIMIT:]
    return build_messages(session.read_entries(ids), 0) if ids else []


def write_label(writer: SessionWriter, session: Session, target: str, text: str | None) -> bool:
    """Attaches `text` as the label of `target` (None or blank: clears it); returns False when
    nothing changes (the label is already that, or there is none to clear)."""
    label = clean_name(text or "")
    current = session.labels().get(target)
    if (label or None) == current:
        return False
    fields: dict[str, Any] = {"targetId": target}
    if label:
        fields["label"] = label
    writer.append_entry("label", fields)
    writer.commit(force=True)
    return True


def write_goto(writer: SessionWriter, target: str, *, from_id: str | None, summary: str | None,
               behind: LeftBehind | None) -> str:
    """Moves the leaf to `target`, persisted (see the module doc); returns the new leaf's id."""
    if summary is None or behind is None:
        return writer.move_leaf(target, {"reason": "goto"})
    fields = {"fromId": from_id or "root", "summary": summary,
              "details": {"readFiles": list(behind.read_files), "modifiedFiles": list(behind.modified_files)}}
    entry_id = writer.append_entry("branch_summary", fields, parent_id=target)
    writer.commit(force=True)
    return entry_id
