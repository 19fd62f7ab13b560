"""The conversation side of a rewind: moving the leaf back, or summarizing from or up to a turn.

- **Conversation**: a `commandcode.leaf` custom entry is appended whose parent is the entry the
  checkpoint started from (its `leafEntryId`, so a summary or compaction the turn started after
  stays in the context), so both this tool and the real CLI (whose leaf is the last valid line)
  resume there; checkpoint N and the later ones are kept, marked rewound past (`redo_points.py`).
- **Summarize from here**: the turns after N are replaced in the context by a `branch_summary`
  appended under N's starting entry; files and the original messages stay.
- **Summarize up to here**: a `compaction` whose `firstKeptEntryId` is the first entry of turn N;
  files and the original messages stay.

The summary text comes from the `summarizer` the caller passes (the agent's provider), so
nothing here knows which model writes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import CheckpointError, InvalidSessionError, UsageError
from ..sessions.files import SessionFiles
from ..sessions.reader import Session, open_session
from ..sessions.tokens import estimate_tokens
from ..sessions.writer import SessionWriter
from .modes import RewindMode
from .records import Checkpoint
from .rewind_result import RewindResult

Summarize = Callable[[list[dict[str, Any]]], str]
"""Writes the summary of a run of messages (`agent.summarize.Summarizer` has this shape)."""


def conversation_target(session: Session, checkpoint: Checkpoint) -> str | None:
    """The entry the checkpoint's turn started from: the entry of `lastMessageId`, else the
    context entry that covers `messageCount` messages; `None` when the turn was the first.

    Raises:
        InvalidSessionError: the transcript no longer holds that point.
    """
    if checkpoint.leaf_entry_id is not None and session.has_entry(checkpoint.leaf_entry_id):
        return checkpoint.leaf_entry_id
    if checkpoint.message_count == 0:
        return None
    if checkpoint.last_message_id is not None:
        entry_id = session.message_id_map().get(checkpoint.last_message_id)
        if entry_id is not None:
            return entry_id
    if checkpoint.message_count < 0:  # UNKNOWN_COUNT: the record's `messageCount` is not a count
        raise InvalidSessionError(
            f"checkpoint {checkpoint.turn_number} of {session.files.checkpoints} has no usable messageCount "
            f"({checkpoint.extra.get('messageCount')!r}) and no lastMessageId found in the transcript",
            hint="pick another checkpoint, or rewind with --mode code")
    context = session.context()
    if checkpoint.message_count <= len(context.entry_ids):
        return context.entry_ids[checkpoint.message_count - 1]
    raise InvalidSessionError(
        f"{session.files.transcript} does not reach checkpoint {checkpoint.turn_number}'s starting point "
        f"({checkpoint.message_count} messages, the context has {len(context.entry_ids)})"
    )


def _context_messages_before(session: Session, target_entry_id: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
    """Splits the context at the target entry: (messages up to it, messages after it, the id of
    the first entry after it). The split is by place on the path, not by place in the context: a
    compaction shows first but stands for what came before its kept entries, and the target may
    be no message at all (the leaf marker of a rewind the turn started after)."""
    context = session.context()
    ids, messages = list(context.entry_ids), list(context.messages)
    if target_entry_id is None:
        return [], messages, ids[0] if ids else None
    where = {entry_id: position for position, entry_id in enumerate(session.path_ids())}
    if target_entry_id not in where or any(entry_id not in where for entry_id in ids):
        raise InvalidSessionError(f"entry {target_entry_id} is not in the current context; it may have been compacted")
    places = [float(where[entry_id]) for entry_id in ids]
    if len(places) > 1 and places[0] > places[1]:  # a compaction: it stands just before its kept entries
        places[0] = places[1] - 0.5
    cut = sum(1 for place in places if place <= where[target_entry_id])
    return messages[:cut], messages[cut:], ids[cut] if cut < len(ids) else None


def _open_session(files: SessionFiles) -> Session:
    if not files.transcript.exists():
        raise InvalidSessionError(f"session {files.session_id} has no transcript; only code can be rewound")
    return open_session(files.transcript)


@dataclass(frozen=True)
class ConversationPlan:
    """What a conversation-side rewind appends, worked out before anything is written."""

    target: str | None
    summary_entry: tuple[str, dict[str, Any], Any] | None = None  # (type, fields, parent_id or ...)
    skipped_lines: int = 0  # the transcript's unreadable lines, left out as every reader leaves them out


def plan_conversation(
    files: SessionFiles, records: list[Checkpoint], index: int, mode: RewindMode, number: int, *, dry_run: bool,
    summarizer: Summarize | None,
) -> ConversationPlan:
    checkpoint = records[index]
    session = _open_session(files)
    target = conversation_target(session, checkpoint)
    skipped = len(session.skipped_lines)
    if mode.moves_conversation:
        return ConversationPlan(target, skipped_lines=skipped)
    _refuse_compaction_after(session, target, number, mode)
    before, after, first_kept = _context_messages_before(session, target)
    if summarizer is None and not dry_run:
        raise UsageError(f"--mode {mode.value} needs a summarizer to write the summary")
    summarize: Summarize = summarizer or _no_summary
    fields: dict[str, Any]
    if mode is RewindMode.SUMMARIZE_FROM:
        if not after:
            raise CheckpointError(f"nothing after checkpoint {number} to summarize")
        modified = sorted({item.path for record in records[index:] for item in record.files})
        fields = {
            "fromId": session.leaf_id or "root",
            "summary": "" if dry_run else summarize(after),
            "details": {"readFiles": [], "modifiedFiles": modified},
        }
        return ConversationPlan(target, ("branch_summary", fields, target), skipped)
    if not before:
        raise CheckpointError(f"nothing before checkpoint {number} to summarize")
    fields = {
        "summary": "" if dry_run else summarize(before),
        "firstKeptEntryId": first_kept or "",
        "tokensBefore": estimate_tokens(before),
    }
    return ConversationPlan(target, ("compaction", fields, ...), skipped)


def _refuse_compaction_after(session: Session, target: str | None, number: int, mode: RewindMode) -> None:
    """A compaction lies on the path after the turn's starting point. A summary from there would
    branch off before it, bringing back the turns it summarized; a compaction up to there keeps
    the path entries from the turn on, so the older summary would show again among the kept
    turns. Either way the context would not be the one shown: refused.

    Raises:
        CheckpointError: there is such a compaction.
    """
    path = session.path_ids()
    start = path.index(target) + 1 if target is not None and target in path else 0
    if any(entry.get("type") == "compaction" for entry in session.read_entries(path[start:])):
        verb = "from" if mode is RewindMode.SUMMARIZE_FROM else "up to"
        raise CheckpointError(
            f"cannot summarize {verb} checkpoint {number}: the conversation after it holds an earlier summary "
            "(a compaction), which this would undo or repeat",
            hint="summarize from or up to a checkpoint after that summary")


def summaries_blocked(files: SessionFiles, records: Sequence[Checkpoint]) -> set[str]:
    """The ids of the turn checkpoints a compaction has passed: the latest compaction on the
    conversation's path (the first entry of its context) comes after where they started, so a
    summary from or up to them is refused (`_refuse_compaction_after`) and is not offered."""
    if not files.transcript.exists():
        return set()
    session = open_session(files.transcript)
    context_ids, _ = session.context_plan()
    if not context_ids or session.read_entries(context_ids[:1])[0].get("type") != "compaction":
        return set()
    where = {entry_id: position for position, entry_id in enumerate(session.path_ids())}
    compaction = where.get(context_ids[0], -1)
    blocked = set()
    for record in records:
        if record.is_redo_point or record.rewound:
            continue
        try:
            target = conversation_target(session, record)
        except InvalidSessionError:
            target = None
        if (where.get(target, -1) if target is not None else -1) < compaction:
            blocked.add(record.id)
    return blocked


def apply_conversation(writer: SessionWriter, plan: ConversationPlan, marker: dict[str, Any], result: RewindResult) -> str:
    """Moves the leaf (`marker` is the leaf entry's data) or appends the summary; returns the new leaf."""
    if plan.summary_entry is None:
        return writer.move_leaf(plan.target, marker)
    entry_type, fields, parent = plan.summary_entry
    result.summary_entry_id = writer.append_entry(entry_type, fields, parent_id=parent)
    writer.commit(force=True)
    return result.summary_entry_id


def _no_summary(messages: list[dict[str, Any]]) -> str:
    return ""
