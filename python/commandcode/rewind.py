"""Rewinding a session to a checkpoint: the code, the conversation, both, or a summary.

Rewinding to checkpoint N restores the state from just before turn N.

- **Code**: the checkpoints from the newest down to N are replayed newest-first, so for each
  path the backup taken in the earliest of those turns wins: a file created after N is deleted,
  a deleted one comes back, a modified one gets its exact bytes and mode back. Everything is
  verified before anything is written, applied all or nothing, and never outside the session's
  working directory unless allowed. Files changed outside the tracked tools since (the current
  bytes differ from what our tools last left, or a later backup differs from what an earlier
  tool left) are refused unless forced.
- **Conversation**: a `commandcode.leaf` custom entry is appended whose parent is the entry
  the checkpoint started from, so both this tool and the real CLI (whose leaf is the last valid
  line) resume there; checkpoint N and every later one are dropped.
- **Summarize from here**: the turns after N are replaced in the context by a `branch_summary`
  appended under N's starting entry; files and the original messages stay.
- **Summarize up to here**: a `compaction` whose `firstKeptEntryId` is the first entry of turn
  N; files and the original messages stay.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from . import backups
from .checkpoints import Checkpoint, FileBackup, read_checkpoints, resolve_path, write_checkpoints
from .errors import ChangedOutsideError, InvalidSessionError, RestoreError, UsageError
from .paths import SessionFiles

LEAF_CUSTOM_TYPE = "commandcode.leaf"


class RewindMode(str, Enum):
    """What a rewind puts back."""

    BOTH = "both"
    CONVERSATION = "conversation"
    CODE = "code"
    SUMMARIZE_FROM = "summarize-from"
    SUMMARIZE_TO = "summarize-to"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def restores_code(self) -> bool:
        return self in (RewindMode.BOTH, RewindMode.CODE)

    @property
    def touches_conversation(self) -> bool:
        return self is not RewindMode.CODE


_LABELS = {
    RewindMode.BOTH: "Restore code and conversation",
    RewindMode.CONVERSATION: "Restore conversation only",
    RewindMode.CODE: "Restore code only",
    RewindMode.SUMMARIZE_FROM: "Summarize from here",
    RewindMode.SUMMARIZE_TO: "Summarize up to here",
}
CANCEL_LABEL = "Cancel"


# --------------------------------------------------------------------------------------------
# Numbering and choices


def checkpoint_numbers(records: Sequence[Checkpoint]) -> list[int]:
    """The number each checkpoint is shown and chosen by: its `turnNumber` (1 is the first
    prompt), or its position when the file holds duplicate or missing numbers."""
    numbers = [record.turn_number for record in records]
    if len(set(numbers)) == len(numbers) and all(number > 0 for number in numbers):
        return numbers
    return list(range(1, len(records) + 1))


def find_checkpoint(records: Sequence[Checkpoint], number: int) -> int:
    """The index of checkpoint `number`.

    Raises:
        UsageError: there is no such checkpoint (the message lists the ones there are).
    """
    numbers = checkpoint_numbers(records)
    if number in numbers:
        return numbers.index(number)
    if not numbers:
        raise UsageError("this session has no checkpoints")
    raise UsageError(f"no checkpoint {number}; this session has {_ranges(numbers)}")


def _ranges(numbers: list[int]) -> str:
    return ", ".join(str(number) for number in numbers) if len(numbers) < 8 else f"{numbers[0]}–{numbers[-1]}"


def changed_paths(records: Sequence[Checkpoint], index: int, cwd: Path) -> list[str]:
    """Every path a code rewind to `records[index]` would consider (the files touched since)."""
    seen: dict[str, None] = {}
    for record in records[index:]:
        for item in record.files:
            seen.setdefault(resolve_path(item.path, cwd), None)
    return list(seen)


def available_modes(records: Sequence[Checkpoint], index: int, *, has_transcript: bool) -> list[RewindMode]:
    """The choices a checkpoint offers. A rewind that would change no file offers no code
    restore; a session with no transcript offers code only; summarizing up to a checkpoint
    needs something before it."""
    has_code = any(item.restorable for record in records[index:] for item in record.files)
    modes = []
    if has_transcript:
        if has_code:
            modes.append(RewindMode.BOTH)
        modes.append(RewindMode.CONVERSATION)
    if has_code:
        modes.append(RewindMode.CODE)
    if has_transcript:
        modes.append(RewindMode.SUMMARIZE_FROM)
        if records[index].message_count > 0:
            modes.append(RewindMode.SUMMARIZE_TO)
    return modes


# --------------------------------------------------------------------------------------------
# Code


@dataclass(frozen=True)
class SkippedFile:
    """A file a code rewind leaves as it is, and why (`too_large`, `disk_full`, `symlink`)."""

    path: Path
    reason: str


@dataclass(frozen=True)
class CodePlan:
    """The restore targets for a code rewind, the files it cannot restore, and the outside
    changes found between turns (from recorded digests alone)."""

    targets: list[backups.RestoreTarget]
    skipped: list[SkippedFile]
    conflicts: list[backups.Problem]


def plan_code(records: Sequence[Checkpoint], index: int, cwd: Path, files: SessionFiles) -> CodePlan:
    """Replays checkpoints newest-first down to `records[index]`: per path, the backup of the
    earliest of those turns is the state to restore."""
    numbers = checkpoint_numbers(records)
    history: dict[str, list[tuple[int, FileBackup]]] = {}
    for position in range(len(records) - 1, index - 1, -1):
        seen: set[str] = set()
        for item in records[position].files:
            key = resolve_path(item.path, cwd)
            if key not in seen:
                seen.add(key)
                history.setdefault(key, []).append((numbers[position], item))
    targets, skipped, conflicts = [], [], []
    for key, entries in history.items():
        _, wanted = entries[-1]
        _, newest = entries[0]
        if not wanted.restorable:
            skipped.append(SkippedFile(Path(key), wanted.skipped or "skipped"))
            continue
        conflicts.extend(_conflicts_between_turns(Path(key), entries))
        expected = None
        if newest.after_known:
            expected = newest.after_hash if newest.after_hash is not None else "absent"
        targets.append(
            backups.RestoreTarget(
                path=Path(key),
                digest=wanted.hash,
                algorithm=wanted.algorithm,
                blob_folder=files.file_history if wanted.algorithm == backups.SHA256 else None,
                mode=wanted.mode,
                expected=expected,
            )
        )
    return CodePlan(targets, skipped, conflicts)


def _conflicts_between_turns(path: Path, entries: list[tuple[int, FileBackup]]) -> list[backups.Problem]:
    """A later turn's backup that differs from what an earlier turn's tool left means the file
    was changed outside the tracked tools in between (a rewind would throw that change away)."""
    found = []
    for (newer_number, newer), (older_number, older) in zip(entries, entries[1:]):
        comparable = newer.restorable and (newer.hash is None or newer.algorithm == backups.BLAKE3)
        if older.after_known and comparable and newer.hash != older.after_hash:
            message = f"{path} was changed outside the tracked tools between turn {older_number} and turn {newer_number}"
            found.append(backups.Problem(path, "changed_outside", message))
    return found


@dataclass
class RewindResult:
    """What a rewind did (or, for a dry run, would do)."""

    number: int
    mode: RewindMode
    dry_run: bool
    written: list[Path] = field(default_factory=list)
    deleted: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    changed_outside: list[Path] = field(default_factory=list)
    problems: list[backups.Problem] = field(default_factory=list)
    leaf_entry_id: str | None = None
    summary_entry_id: str | None = None
    dropped_checkpoints: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "checkpoint": self.number,
            "mode": self.mode.value,
            "dryRun": self.dry_run,
            "written": [str(path) for path in self.written],
            "deleted": [str(path) for path in self.deleted],
            "unchanged": [str(path) for path in self.unchanged],
            "skipped": [{"path": str(item.path), "reason": item.reason} for item in self.skipped],
            "changedOutside": [str(path) for path in self.changed_outside],
            "problems": [{"path": str(item.path), "code": item.code, "message": item.message} for item in self.problems],
            "leafEntryId": self.leaf_entry_id,
            "summaryEntryId": self.summary_entry_id,
            "droppedCheckpoints": self.dropped_checkpoints,
        }


def _refusal(problems: list[backups.Problem]) -> RestoreError:
    message = "nothing was restored: " + "; ".join(problem.message for problem in problems)
    error: RestoreError
    if all(problem.code == "changed_outside" for problem in problems):
        error = ChangedOutsideError(message)
    else:
        error = RestoreError(message)
    error.problems = [(str(problem.path), problem.code, problem.message) for problem in problems]  # type: ignore[attr-defined]
    return error


def _fill_changes(result: RewindResult, outcome: backups.RestoreOutcome) -> None:
    for change in outcome.changes:
        bucket = {"write": result.written, "delete": result.deleted, "unchanged": result.unchanged}[change.action]
        bucket.append(change.path)
        if change.changed_outside:
            result.changed_outside.append(change.path)


def _restore_code(
    files: SessionFiles,
    cwd: Path,
    records: list[Checkpoint],
    index: int,
    result: RewindResult,
    *,
    store: backups.BackupStore,
    force: bool,
    allow_outside: bool,
    faults: dict[str, int] | None,
) -> None:
    plan = plan_code(records, index, cwd, files)
    result.skipped = plan.skipped
    confine = None if allow_outside else cwd
    result.changed_outside.extend(problem.path for problem in plan.conflicts)
    if result.dry_run:
        outcome = backups.check_restore(store, plan.targets, confine_to=confine)
        _fill_changes(result, outcome)
        result.problems = plan.conflicts + outcome.problems
        return
    if plan.conflicts and not force:
        outcome = backups.check_restore(store, plan.targets, confine_to=confine)
        raise _refusal(plan.conflicts + outcome.problems)
    outcome = backups.restore_files(
        store, plan.targets, session_id=files.session_id, confine_to=confine, force=force, **(faults or {})
    )
    _fill_changes(result, outcome)
    _record_restored_state(records, index, cwd, outcome)


def _record_restored_state(records: list[Checkpoint], index: int, cwd: Path, outcome: backups.RestoreOutcome) -> None:
    """After a code rewind, the newest record of each restored path learns what is there now,
    so a later rewind does not take our own restore for an outside edit."""
    restored = {str(change.path): change for change in outcome.changes if change.action != "unchanged"}
    for record in reversed(records[index:]):
        for item in record.files:
            change = restored.pop(resolve_path(item.path, cwd), None)
            if change is not None:
                item.after_known = True
                item.after_hash = change.content_id if change.action == "write" else None


# --------------------------------------------------------------------------------------------
# Conversation


def conversation_target(session: Any, checkpoint: Checkpoint) -> str | None:
    """The entry the checkpoint's turn started from: the entry of `lastMessageId`, else the
    context entry that covers `messageCount` messages; `None` when the turn was the first.

    Raises:
        InvalidSessionError: the transcript no longer holds that point.
    """
    if checkpoint.message_count == 0:
        return None
    if checkpoint.last_message_id is not None:
        entry_id = session.message_id_map().get(checkpoint.last_message_id)
        if entry_id is not None:
            return entry_id
    context = session.context()
    if checkpoint.message_count <= len(context.entry_ids):
        return context.entry_ids[checkpoint.message_count - 1]
    raise InvalidSessionError(
        f"{session.files.transcript} does not reach checkpoint {checkpoint.turn_number}'s starting point "
        f"({checkpoint.message_count} messages, the context has {len(context.entry_ids)})"
    )


def _context_messages_before(session: Any, target_entry_id: str | None) -> tuple[list[dict], list[dict], str | None]:
    """Splits the context at the target entry: (messages up to it, messages after it, the id of
    the first entry after it)."""
    context = session.context()
    ids, messages = list(context.entry_ids), list(context.messages)
    if target_entry_id is None:
        return [], messages, ids[0] if ids else None
    if target_entry_id not in ids:
        raise InvalidSessionError(f"entry {target_entry_id} is not in the current context; it may have been compacted")
    cut = ids.index(target_entry_id) + 1
    return messages[:cut], messages[cut:], ids[cut] if cut < len(ids) else None


def summarize(messages: list[dict]) -> str:
    """The summary of `messages`: the agent's offline summarizer when present, else a
    deterministic digest of the visible text (first lines of each user and assistant message)."""
    try:
        from .agent.offline import summarize as offline_summarize  # type: ignore[import-not-found]
    except ImportError:
        return _digest_summary(messages)
    return str(offline_summarize(messages))


def _digest_summary(messages: list[dict]) -> str:
    lines = []
    for message in messages:
        role = message.get("role", "?")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                first = str(block["text"]).strip().splitlines()[0][:200]
                lines.append(f"- {role}: {first}")
            elif block.get("type") == "tool_use":
                target = (block.get("input") or {}).get("file_path") or (block.get("input") or {}).get("path") or ""
                lines.append(f"- {role} used {block.get('name')} {target}".rstrip())
    return "Summary of {} messages:\n{}".format(len(messages), "\n".join(lines) if lines else "(no text)")


def estimate_tokens(messages: list[dict]) -> int:
    """The real CLI's estimate: ceil(len(JSON(block)) / 4) per block, 1500 per image."""
    total = 0
    for message in messages:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "image":
                total += 1500
            else:
                total += math.ceil(len(json.dumps(block, separators=(",", ":"), ensure_ascii=False)) / 4)
    return total


def _open_session(files: SessionFiles) -> Any:
    from .session import open_session

    if not files.transcript.exists():
        raise InvalidSessionError(f"session {files.session_id} has no transcript; only code can be rewound")
    return open_session(files.transcript)


def _open_writer(files: SessionFiles, cwd: Path) -> Any:
    from .writer import SessionWriter

    return SessionWriter.open(files, str(cwd))


def _rewind_conversation(files: SessionFiles, cwd: Path, records: list[Checkpoint], index: int, result: RewindResult) -> None:
    checkpoint = records[index]
    session = _open_session(files)
    target = conversation_target(session, checkpoint)
    result.leaf_entry_id = target
    if result.dry_run:
        return
    with _open_writer(files, cwd) as writer:
        writer.move_leaf(target, {"reason": "rewind", "checkpointId": checkpoint.id})
    result.dropped_checkpoints = len(records) - index
    del records[index:]


def _summarize_from(files: SessionFiles, cwd: Path, records: list[Checkpoint], index: int, result: RewindResult) -> None:
    checkpoint = records[index]
    session = _open_session(files)
    target = conversation_target(session, checkpoint)
    _, after, _ = _context_messages_before(session, target)
    if not after:
        raise UsageError(f"nothing after checkpoint {result.number} to summarize")
    result.leaf_entry_id = target
    if result.dry_run:
        return
    summary = summarize(after)
    modified = sorted({item.path for record in records[index:] for item in record.files})
    with _open_writer(files, cwd) as writer:
        from_id = session.leaf_id or "root"
        writer.move_leaf(target, {"reason": "summarize-from", "checkpointId": checkpoint.id})
        result.summary_entry_id = writer.append_entry(
            "branch_summary",
            {"fromId": from_id, "summary": summary, "details": {"readFiles": [], "modifiedFiles": modified}},
        )
        writer.commit()


def _summarize_to(files: SessionFiles, cwd: Path, records: list[Checkpoint], index: int, result: RewindResult) -> None:
    checkpoint = records[index]
    session = _open_session(files)
    target = conversation_target(session, checkpoint)
    before, _, first_kept = _context_messages_before(session, target)
    if not before:
        raise UsageError(f"nothing before checkpoint {result.number} to summarize")
    if result.dry_run:
        return
    summary = summarize(before)
    with _open_writer(files, cwd) as writer:
        result.summary_entry_id = writer.append_entry(
            "compaction",
            {"summary": summary, "firstKeptEntryId": first_kept or "", "tokensBefore": estimate_tokens(before)},
        )
        writer.commit()


# --------------------------------------------------------------------------------------------
# Entry point


def rewind(
    files: SessionFiles,
    cwd: Path,
    number: int,
    mode: RewindMode,
    *,
    dry_run: bool = False,
    force: bool = False,
    allow_outside: bool = False,
    store: backups.BackupStore | None = None,
    faults: dict[str, int] | None = None,
) -> RewindResult:
    """Rewinds session `files` (working directory `cwd`) to checkpoint `number`.

    Code is restored before the conversation moves, so a refused or failed code restore leaves
    the conversation as it was. `faults` passes test hooks to the native restore.

    Raises:
        UsageError: no such checkpoint, or the mode is not offered for it.
        BackupIntegrityError, ChangedOutsideError, RestoreError: the code restore was refused
            or failed; nothing was changed (the error names each failing file).
        InvalidSessionError: the transcript cannot be rewound to that point.
    """
    backups.recover_pending(files.session_id)
    records = read_checkpoints(files.checkpoints)
    index = find_checkpoint(records, number)
    offered = available_modes(records, index, has_transcript=files.transcript.exists())
    if mode not in offered:
        choices = ", ".join(choice.value for choice in offered) or "none"
        raise UsageError(f"checkpoint {number} does not offer --mode {mode.value}; it offers: {choices}")
    result = RewindResult(number=number, mode=mode, dry_run=dry_run)
    cwd = Path(cwd)
    if mode.restores_code:
        _restore_code(
            files, cwd, records, index, result,
            store=store if store is not None else backups.BackupStore(),
            force=force, allow_outside=allow_outside, faults=faults,
        )
        if not dry_run:
            write_checkpoints(files.checkpoints, records)
    if mode in (RewindMode.BOTH, RewindMode.CONVERSATION):
        try:
            _rewind_conversation(files, cwd, records, index, result)
        except Exception as error:
            if mode is RewindMode.BOTH and not dry_run:
                raise RestoreError(f"the files were restored, but the conversation was not moved: {error}") from error
            raise
    elif mode is RewindMode.SUMMARIZE_FROM:
        _summarize_from(files, cwd, records, index, result)
    elif mode is RewindMode.SUMMARIZE_TO:
        _summarize_to(files, cwd, records, index, result)
    if result.dropped_checkpoints:
        write_checkpoints(files.checkpoints, records)
    return result

