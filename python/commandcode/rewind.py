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

import contextlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import backups
from .agent.offline import summarize
from .checkpoints import (
    Checkpoint,
    CheckpointManager,
    FileBackup,
    checkpoints_bytes,
    read_checkpoints,
    resolve_path,
    write_checkpoints,
)
from .errors import ChangedOutsideError, InvalidSessionError, RestoreError, UsageError
from .fsutil import read_regular
from .lock import WriterLock
from .paths import SessionFiles
from .rewind_modes import CANCEL_LABEL, RewindMode
from .session import Session, content_blocks, open_session
from .signals import deferred_signals
from .writer import SessionWriter




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
        InvalidSessionError: the session has no checkpoints at all (no `--to` would do: a
            refusal, not a usage error).
    """
    numbers = checkpoint_numbers(records)
    if number in numbers:
        return numbers.index(number)
    if not numbers:
        raise InvalidSessionError("this session has no checkpoints", hint="a rewind needs a turn recorded with checkpoints")
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
    has_code = any(item.restorable or item.problem for record in records[index:] for item in record.files)
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
    """The restore targets for a code rewind, the files it cannot restore, the outside changes
    found between turns (from recorded digests alone), and the malformed records that stop it."""

    targets: list[backups.RestoreTarget]
    skipped: list[SkippedFile]
    conflicts: list[backups.Problem]
    problems: list[backups.Problem] = field(default_factory=list)


def plan_code(records: Sequence[Checkpoint], index: int, cwd: Path, files: SessionFiles) -> CodePlan:
    """Replays checkpoints newest-first down to `records[index]`: per path, the backup of the
    earliest of those turns is the state to restore."""
    numbers = checkpoint_numbers(records)
    history: dict[str, list[tuple[int, FileBackup]]] = {}
    base = os.fspath(cwd)
    any_malformed = False
    for position in range(len(records) - 1, index - 1, -1):
        seen: set[str] = set()
        for item in records[position].files:
            key = os.path.normpath(os.path.join(base, item.path))  # resolve_path, inlined: 1,000s of items
            any_malformed = any_malformed or item.problem is not None
            if key not in seen:
                seen.add(key)
                history.setdefault(key, []).append((numbers[position], item))
    targets, skipped, conflicts, problems = [], [], [], []
    blob_folder: Path | None = None
    for key, entries in history.items():
        _, wanted = entries[-1]
        _, newest = entries[0]
        path = Path(key)
        malformed = any_malformed and next((item for _, item in entries if item.problem is not None), None)
        if malformed:
            message = f"{path} cannot be restored: its checkpoint record is malformed ({malformed.problem})"
            problems.append(backups.Problem(path, "invalid_record", message))
            continue
        if not wanted.restorable:
            skipped.append(SkippedFile(path, wanted.skipped or "skipped"))
            continue
        if len(entries) > 1:
            conflicts.extend(_conflicts_between_turns(path, entries))
        expected = None
        if newest.after_known:
            expected = newest.after_hash if newest.after_hash is not None else "absent"
        if wanted.algorithm == backups.SHA256 and blob_folder is None:
            blob_folder = files.file_history
        targets.append(
            backups.RestoreTarget(
                path=path,
                digest=wanted.hash,
                algorithm=wanted.algorithm,
                blob_folder=blob_folder if wanted.algorithm == backups.SHA256 else None,
                mode=wanted.mode,
                expected=expected,
            )
        )
    return CodePlan(targets, skipped, conflicts, problems)


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
    rows = [(str(problem.path), problem.code, problem.message) for problem in problems]
    if all(problem.code == "changed_outside" for problem in problems):
        return ChangedOutsideError(message, problems=rows)
    return RestoreError(message, problems=rows)


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
        result.problems = plan.problems + plan.conflicts + outcome.problems
        return
    try:
        if plan.problems or (plan.conflicts and not force):
            outcome = backups.check_restore(store, plan.targets, confine_to=confine)
            raise _refusal(plan.problems + plan.conflicts + outcome.problems)
        # The records learn the restored state before the restore runs, and the native restore
        # replaces the checkpoints file in the same journaled step as the files: a crash leaves both
        # old or both new, never restored files with records that call them changed outside.
        _record_restored_state(records, index, cwd, plan.targets)
        outcome = backups.restore_files(
            store, plan.targets, session_id=files.session_id, confine_to=confine, force=force,
            companion=(files.checkpoints, checkpoints_bytes(records)), **(faults or {})
        )
    except RestoreError as error:
        if any(code == "outside" for _, code, _ in error.problems):
            error.hint = outside_hint(cwd)
        raise
    _fill_changes(result, outcome)


def outside_hint(cwd: Path) -> str:
    """What to say when a rewind refuses files outside the session's folder (a session resumed
    with `-r` from another folder edits files there)."""
    return (f"the session's folder is {cwd}; to restore files outside it, pass --allow-outside "
            "(preview with --dry-run)")


def _restored_digest(target: backups.RestoreTarget) -> tuple[bool, str | None]:
    """`(known, blake3)` of what a target holds once restored (`None`: no file)."""
    if target.digest is None:
        return True, None
    if target.algorithm == backups.BLAKE3:
        return True, target.digest.lower()
    try:  # a real-CLI blob is named by sha256; the records keep blake3
        return True, backups.content_id(read_regular((target.blob_folder or Path()).joinpath(target.digest)))
    except OSError:
        return False, None  # the restore refuses a missing blob anyway


def _record_restored_state(records: list[Checkpoint], index: int, cwd: Path,
                           targets: list[backups.RestoreTarget]) -> None:
    """The newest record of each restored path learns what a successful restore leaves there,
    so a later rewind does not take our own restore for an outside edit."""
    restored = {str(target.path): target for target in targets}
    for record in reversed(records[index:]):
        for item in record.files:
            target = restored.pop(resolve_path(item.path, cwd), None)
            if target is not None:
                item.after_known, item.after_hash = _restored_digest(target)


# --------------------------------------------------------------------------------------------
# Conversation


def conversation_target(session: Session, checkpoint: Checkpoint) -> str | None:
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


def _context_messages_before(session: Session, target_entry_id: str | None) -> tuple[list[dict], list[dict], str | None]:
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


def estimate_tokens(messages: list[dict]) -> int:
    """The real CLI's estimate: ceil(len(JSON(block)) / 4) per block, 1500 per image."""
    total = 0
    for message in messages:
        for block in content_blocks(message.get("content")):
            if block.get("type") == "image":
                total += 1500
            else:
                total += math.ceil(len(json.dumps(block, separators=(",", ":"), ensure_ascii=False)) / 4)
    return total


def _open_session(files: SessionFiles) -> Session:
    if not files.transcript.exists():
        raise InvalidSessionError(f"session {files.session_id} has no transcript; only code can be rewound")
    return open_session(files.transcript)


@dataclass(frozen=True)
class _ConversationPlan:
    """What a conversation-side rewind appends, worked out before anything is written."""

    target: str | None
    summary_entry: tuple[str, dict[str, Any], Any] | None = None  # (type, fields, parent_id or ...)


def _plan_conversation(
    files: SessionFiles, records: list[Checkpoint], index: int, mode: RewindMode, number: int, *, dry_run: bool
) -> _ConversationPlan:
    checkpoint = records[index]
    session = _open_session(files)
    target = conversation_target(session, checkpoint)
    if mode.moves_conversation:
        return _ConversationPlan(target)
    before, after, first_kept = _context_messages_before(session, target)
    fields: dict[str, Any]
    if mode is RewindMode.SUMMARIZE_FROM:
        if not after:
            raise UsageError(f"nothing after checkpoint {number} to summarize")
        modified = sorted({item.path for record in records[index:] for item in record.files})
        fields = {
            "fromId": session.leaf_id or "root",
            "summary": "" if dry_run else summarize(after),
            "details": {"readFiles": [], "modifiedFiles": modified},
        }
        return _ConversationPlan(target, ("branch_summary", fields, target))
    if not before:
        raise UsageError(f"nothing before checkpoint {number} to summarize")
    fields = {
        "summary": "" if dry_run else summarize(before),
        "firstKeptEntryId": first_kept or "",
        "tokensBefore": estimate_tokens(before),
    }
    return _ConversationPlan(target, ("compaction", fields, ...))


def _apply_conversation(
    writer: SessionWriter, plan: _ConversationPlan, records: list[Checkpoint], index: int, result: RewindResult
) -> None:
    if plan.summary_entry is None:
        writer.move_leaf(plan.target, {"reason": "rewind", "checkpointId": records[index].id})
        result.dropped_checkpoints = len(records) - index
        del records[index:]
        return
    entry_type, fields, parent = plan.summary_entry
    result.summary_entry_id = writer.append_entry(entry_type, fields, parent_id=parent)
    writer.commit(force=True)


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
    writer: SessionWriter | None = None,
    checkpoints: CheckpointManager | None = None,
    faults: dict[str, int] | None = None,
) -> RewindResult:
    """Rewinds session `files` (working directory `cwd`) to checkpoint `number`.

    Everything that can be checked is checked before anything is written: the checkpoint and
    mode, the writer lock, the conversation's starting point, then the code restore (itself
    verified before it writes); the conversation moves last. An agent rewinding its own session
    passes the `writer` it holds and its `checkpoints` manager (flushed before, reloaded after,
    so neither side overwrites the other); `faults` passes test hooks to the native restore.

    Raises:
        UsageError: no such checkpoint, or the mode is not offered for it.
        SessionLockedError: another process has the session open for writing.
        BackupIntegrityError, ChangedOutsideError, RestoreError: the code restore was refused
            or failed; nothing was changed (the error names each failing file).
        InvalidSessionError: the transcript cannot be rewound to that point.
    """
    backups.recover_pending(files, None if allow_outside else cwd, store=store)
    if checkpoints is not None:
        checkpoints.flush()
    try:
        return _rewind(files, Path(cwd), number, mode, dry_run=dry_run, force=force, allow_outside=allow_outside,
                       store=store, writer=writer, faults=faults)
    finally:
        if checkpoints is not None:
            checkpoints.reload()


def _rewind(
    files: SessionFiles,
    cwd: Path,
    number: int,
    mode: RewindMode,
    *,
    dry_run: bool,
    force: bool,
    allow_outside: bool,
    store: backups.BackupStore | None,
    writer: SessionWriter | None,
    faults: dict[str, int] | None,
) -> RewindResult:
    records = read_checkpoints(files.checkpoints)
    index = find_checkpoint(records, number)
    offered = available_modes(records, index, has_transcript=files.transcript.exists())
    if mode not in offered:
        choices = ", ".join(choice.value for choice in offered) or "none"
        raise UsageError(f"checkpoint {number} does not offer --mode {mode.value}; it offers: {choices}")
    result = RewindResult(number=number, mode=mode, dry_run=dry_run)
    store = store if store is not None else backups.BackupStore()
    with contextlib.ExitStack() as stack:
        if writer is None and not dry_run:
            if mode is RewindMode.CODE:
                stack.enter_context(WriterLock(files.transcript))
            else:
                writer = stack.enter_context(SessionWriter.open(files, str(cwd)))
        conversation = None
        if mode is not RewindMode.CODE:
            conversation = _plan_conversation(files, records, index, mode, number, dry_run=dry_run)
            result.leaf_entry_id = conversation.target
        if not dry_run:
            # From the first file written to the checkpoints file, a Ctrl-C or `kill` waits: code,
            # conversation and checkpoints land together, then the signal is delivered.
            stack.enter_context(deferred_signals())
        if mode.restores_code:
            _restore_code(files, cwd, records, index, result, store=store, force=force,
                          allow_outside=allow_outside, faults=faults)
        if conversation is None or dry_run:
            return result
        assert writer is not None
        try:
            _apply_conversation(writer, conversation, records, index, result)
        except Exception as error:
            if mode is RewindMode.BOTH:
                raise RestoreError(f"the files were restored, but the conversation was not moved: {error}") from error
            raise
        if result.dropped_checkpoints:
            write_checkpoints(files.checkpoints, records)
    return result
