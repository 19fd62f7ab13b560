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
  line) resume there; checkpoint N and the ones off the new path are kept, marked rewound past.
- **Summarize from here**: the turns after N are replaced in the context by a `branch_summary`
  appended under N's starting entry; files and the original messages stay.
- **Summarize up to here**: a `compaction` whose `firstKeptEntryId` is the first entry of turn
  N; files and the original messages stay.
- **Redo** (`redo`): undoes the newest rewind no redo has undone yet, putting files, marks and
  leaf back to exactly what they were before it (`redo_points.py`).

Before any of them writes, what a killed process of the session left is finished or removed:
an interrupted restore (`recover_pending`), commands killed mid-run (`shell_pending.py`), and
the temp files of killed writes (`leftovers.py`, as at a turn's open).

Every operation records a redo point first; it lands with the files (the native restore's
companion step) or alone, atomically, before the leaf moves, and is marked done after: a kill in
between is finished by `recover_pending` (the files' journal, then the conversation move).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CheckpointError, RestoreError
from ..sessions.files import SessionFiles
from ..sessions.lock import WriterLock
from ..sessions.writer import SessionWriter
from ..storage.signals import deferred_signals
from . import shell_pending
from . import store as backups
from .blob_rule import enforce
from .compatible import BlobNames
from .leftovers import LeftoverSweep
from .manager import CheckpointManager
from .modes import RewindMode
from .records import Checkpoint, parse_checkpoints, read_checkpoints_data, write_checkpoints
from .redo_points import (
    OP_REDO,
    OP_REWIND,
    PENDING,
    current_leaf,
    finish_pending_conversation,
    leaf_marker_data,
    mark_after_move,
    new_redo_point,
    require_undoable,
    restore_marks,
    rewound_ids,
    unapply,
)
from .rewind_code import restore_code
from .rewind_conversation import ConversationPlan, Summarize, apply_conversation, plan_conversation, summaries_blocked
from .rewind_numbers import available_modes, checkpoint_numbers, find_checkpoint
from .rewind_preview import fill_preview
from .rewind_result import RewindResult, SkippedFile

__all__ = ["RewindMode", "RewindOptions", "RewindResult", "SkippedFile", "Summarize", "available_modes",
           "checkpoint_numbers", "find_checkpoint", "recover_pending", "redo", "rewind", "summaries_blocked"]


@dataclass(frozen=True)
class RewindOptions:
    """How a `rewind` or `redo` runs. `dry_run` checks and previews without writing (`diff` adds
    unified diffs to the preview); `force` overwrites files changed outside the tracked tools;
    `allow_outside` lets the restore write outside the session's folder. An agent rewinding its
    own session passes the `writer` it holds and its `checkpoints` manager (flushed before,
    reloaded after, so neither side overwrites the other); `summarizer` writes the summary of the
    summarizing modes (the agent passes its provider's); `store` is the backup store (the user's
    by default); `faults` are the native restore's test hooks."""

    dry_run: bool = False
    force: bool = False
    allow_outside: bool = False
    diff: bool = False
    store: backups.BackupStore | None = None
    writer: SessionWriter | None = None
    checkpoints: CheckpointManager | None = None
    summarizer: Summarize | None = None
    faults: dict[str, int] | None = None


_DEFAULTS = RewindOptions()


def recover_pending(files: SessionFiles, root: Path | None, *, store: backups.BackupStore | None = None,
                    writer: SessionWriter | None = None) -> tuple[str, list[Path]] | None:
    """Finishes or undoes a restore of this session that a crash interrupted, its journal checked
    against the confinement `root` first (see `store.recover_pending`), then the conversation
    move of a rewind or redo a kill interrupted; `None` when there was no file restore to finish."""
    outcome = backups.recover_pending(files, root, store=store)
    finish_pending_conversation(files, root if root is not None else Path.cwd(), writer)
    return outcome


def rewind(files: SessionFiles, cwd: Path, number: int, mode: RewindMode, options: RewindOptions = _DEFAULTS) -> RewindResult:
    """Rewinds session `files` (working directory `cwd`) to checkpoint `number`, as `options` say.

    Everything that can be checked is checked before anything is written: the checkpoint and
    mode, the writer lock, the conversation's starting point, then the code restore (itself
    verified before it writes); the conversation moves last.

    Raises:
        CheckpointError: no such checkpoint, or the mode is not offered for it.
        SessionLockedError: another process has the session open for writing.
        BackupIntegrityError, ChangedOutsideError, RestoreError: the code restore was refused
            or failed; nothing was changed (the error names each failing file).
        InvalidSessionError: the transcript cannot be rewound to that point.
    """
    def check(records: list[Checkpoint]) -> int:
        index = find_checkpoint(records, number)
        compacted = not mode.restores_code and not mode.moves_conversation and \
            records[index].id in summaries_blocked(files, records)
        offered = available_modes(records, index, has_transcript=files.transcript.exists(), summarizable=not compacted)
        if mode not in offered:
            choices = ", ".join(choice.value for choice in offered) or "none"
            passed = " (a rewind passed it: its prompt is not in the conversation)" if records[index].rewound else \
                " (a compaction after it summarized its turns)" if compacted else ""
            raise CheckpointError(f"checkpoint {number} does not offer --mode {mode.value}; it offers: {choices}{passed}",
                                  hint="`commandcode checkpoints list REF --all` shows what each checkpoint offers")
        return index

    def run(records: list[Checkpoint], stack: contextlib.ExitStack, active: SessionWriter | None,
            settle: Callable[[], None]) -> RewindResult:
        index = check(records)
        result = RewindResult(number=number, mode=mode, dry_run=options.dry_run)
        conversation = None
        if mode is not RewindMode.CODE:
            conversation = plan_conversation(files, records, index, mode, number, dry_run=options.dry_run,
                                             summarizer=options.summarizer)
            result.leaf_entry_id = conversation.target
            result.skipped_lines = conversation.skipped_lines
        facts = {"op": OP_REWIND, "checkpoint": number, "checkpointId": records[index].id, "mode": mode.value}
        return _operate(_Step(files, cwd, records, index, result, facts, conversation, stack, active, options,
                              settle, code=mode.restores_code, moves=mode.moves_conversation))

    return _session_operation(files, cwd, run, check, options, conversation=mode is not RewindMode.CODE,
                              pause=mode.restores_code or mode.moves_conversation)


def redo(files: SessionFiles, cwd: Path, options: RewindOptions = _DEFAULTS) -> RewindResult:
    """Undoes the newest rewind no redo has undone yet: every file it touched gets back the exact
    bytes and mode it had (or is deleted again), the checkpoints it marked rewound past are
    offered again, and the leaf returns to where it was. Checked like a rewind (outside edits
    are refused unless `options.force`; its `summarizer` is not used).

    Raises:
        CheckpointError: there is no rewind to undo.
        SessionLockedError, BackupIntegrityError, ChangedOutsideError, RestoreError: as `rewind`.
    """
    def run(records: list[Checkpoint], stack: contextlib.ExitStack, active: SessionWriter | None,
            settle: Callable[[], None]) -> RewindResult:
        index = require_undoable(records)
        undone = records[index]
        facts = undone.redo or {}
        number = facts.get("checkpoint")
        mode = RewindMode(facts.get("mode", RewindMode.BOTH.value))
        result = RewindResult(number=number if isinstance(number, int) else 0, mode=mode, dry_run=options.dry_run,
                              redo=True, undid_redo=facts.get("op") == OP_REDO)
        leaf = facts.get("leafBefore")
        has_transcript = files.transcript.exists()
        conversation = ConversationPlan(leaf if isinstance(leaf, str) else None) if has_transcript else None
        result.leaf_entry_id = conversation.target if conversation is not None else None
        rewound = facts.get("rewoundBefore")
        own = {"op": OP_REDO, "undoes": undone.id, "checkpoint": result.number, "mode": mode.value}
        return _operate(_Step(files, cwd, records, index, result, own, conversation, stack, active, options,
                              settle, code=True, moves=conversation is not None,
                              marks=rewound if isinstance(rewound, list) else None, undone=undone))

    return _session_operation(files, cwd, run, require_undoable, options, conversation=files.transcript.exists())


Operation = Callable[[list[Checkpoint], contextlib.ExitStack, "SessionWriter | None", Callable[[], None]], RewindResult]


def _session_operation(files: SessionFiles, cwd: Path, run: Operation, check: Callable[[list[Checkpoint]], int],
                       options: RewindOptions, *, conversation: bool, pause: bool = True) -> RewindResult:
    """Recovery first, the manager flushed, the request checked (a refusal touches nothing, not
    even the lock file), the writer lock taken (the session's own writer when it moves the
    conversation), then `run`; the manager re-reads the records afterwards. `pause`: with the
    cycle collector paused (not around a summary: a model call is no short burst)."""
    with _collections_paused() if pause else contextlib.nullcontext():
        return _checked_operation(files, cwd, run, check, options, conversation=conversation)


def _nothing() -> None:
    """The `settle` of a dry run: it removes nothing."""


@contextlib.contextmanager
def _collections_paused() -> Iterator[None]:
    """Python's cycle collector off for one operation: a rewind of 1,000 files builds some
    10,000 short-lived objects (records, items, targets, changes) and no cycles, and the
    collections they set off cost it several milliseconds. Back as it was after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _checked_operation(files: SessionFiles, cwd: Path, run: Operation, check: Callable[[list[Checkpoint]], int],
                       options: RewindOptions, *, conversation: bool) -> RewindResult:
    backups.recover_pending(files, None if options.allow_outside else cwd, store=options.store)
    shell_pending.recover(files, Path(cwd), options.store or backups.BackupStore())  # commands killed -9: recorded
    writer, checkpoints = options.writer, options.checkpoints
    data = read_checkpoints_data(files.checkpoints)  # read once for the pending move, the check and the run
    if finish_pending_conversation(files, Path(cwd), writer, data=data) or checkpoints is not None:
        if checkpoints is not None:
            checkpoints.flush()
        data = read_checkpoints_data(files.checkpoints)  # rewritten since
    checked = parse_checkpoints(data)
    check(checked)  # reads the records only: when the file is unchanged under the lock, `run` gets them
    # a bare `commandcode rewind` opens no turn: the temps killed writes left go here, the project's
    # folders listed on a thread while the operation plans, removed before its first write (`settle`)
    sweep = None if options.dry_run else LeftoverSweep(files, checked, Path(cwd))
    settle = sweep.finish if sweep is not None else _nothing
    try:
        with contextlib.ExitStack() as stack:
            active = writer
            if active is None and not options.dry_run:
                if conversation:
                    active = stack.enter_context(SessionWriter(files, str(cwd)))
                else:
                    stack.enter_context(WriterLock(files.transcript))
            again = read_checkpoints_data(files.checkpoints)
            return run(checked if again == data else parse_checkpoints(again), stack, active, settle)
    finally:
        settle()
        if checkpoints is not None:
            checkpoints.reload()


@dataclass(frozen=True)
class _Step:
    """One rewind or redo, checked and about to run (`_operate`): the session, its records and
    the index restored to, the result and redo-point facts being filled in, the conversation
    plan (a leaf move when `moves`, else a summary), the exit stack the signals are deferred on,
    the writer holding the lock, `settle` (waits for the removal of the temps killed writes left:
    called before the first write), and whether files are restored (`code`). A redo also names
    the marks it puts back and the redo point it undoes."""

    files: SessionFiles
    cwd: Path
    records: list[Checkpoint]
    index: int
    result: RewindResult
    facts: dict[str, Any]
    conversation: ConversationPlan | None
    stack: contextlib.ExitStack
    writer: SessionWriter | None
    options: RewindOptions
    settle: Callable[[], None]
    code: bool = False
    moves: bool = False
    marks: list[str] | None = None
    undone: Checkpoint | None = None


def _operate(step: _Step) -> RewindResult:
    """Puts the files back to their state at `records[index]` (when `code`), then the
    conversation (a leaf move when `moves`, else a summary), recording a redo point of the
    state before."""
    files, cwd, records, index, result, facts = step.files, step.cwd, step.records, step.index, step.result, step.facts
    conversation, writer, code, moves, marks, undone = \
        step.conversation, step.writer, step.code, step.moves, step.marks, step.undone
    force, allow_outside, faults = step.options.force, step.options.allow_outside, step.options.faults
    store = step.options.store if step.options.store is not None else backups.BackupStore()
    if result.dry_run:
        if code:
            restore_code(files, cwd, records, index, result, store=store, force=force, allow_outside=allow_outside,
                         faults=faults)
            fill_preview(result, store, cwd, diff=step.options.diff)
        return result
    if not code:
        step.settle()  # a code restore settles just before it verifies: the listing overlaps its planning
    leaf_before = writer.leaf_id if writer is not None else current_leaf(files)
    facts.update({"leafBefore": leaf_before, "rewoundBefore": rewound_ids(records)})
    changes_leaf = conversation is not None and (not moves or conversation.target != leaf_before)
    if changes_leaf:
        facts["conversation"] = PENDING
        if moves:
            facts.update({"moveLeaf": True, "leafAfter": conversation.target if conversation else None})
    point = new_redo_point([], facts)
    moment = point.created_at
    if undone is not None:
        unapply(records, undone, point.id)
    if marks is not None:
        restore_marks(records, marks, moment)
    elif moves and conversation is not None:
        mark_after_move(records, index, moment)
    # the records it hides keep our copy of every real-CLI backup; the ones it offers again get
    # back any blob the real CLI cleaned up meanwhile (written before the records that name them)
    blobs = BlobNames(files.file_history)  # listed once, for this rule and the plan of the restore
    enforce(files.session_id, records, store, cwd=cwd,
            project=step.options.checkpoints.project if step.options.checkpoints is not None else None, blobs=blobs)
    after = [*records, point]
    result.redo_point_id = point.id
    # From the first file written to the checkpoints file, a Ctrl-C or `kill` waits: code,
    # conversation and checkpoints land together, then the signal is delivered.
    step.stack.enter_context(deferred_signals())
    if code:
        restore_code(files, cwd, records, index, result, store=store, force=force, allow_outside=allow_outside,
                     faults=faults, point=point, records_after=after, settle=step.settle, blobs=blobs)
    else:
        write_checkpoints(files.checkpoints, after)
    result.rewound_past = sum(1 for record in records if record.rewound)
    if result.kept_outside:
        facts["overwroteOutside"] = True
    if not changes_leaf or conversation is None:
        return result
    assert writer is not None
    try:
        leaf_after = apply_conversation(writer, conversation, leaf_marker_data(facts, point.id), result)
    except Exception as error:
        if code:
            raise RestoreError(f"the files were restored, but the conversation was not moved: {error}",
                               hint="run the same command again: it finishes the move") from error
        raise
    facts.pop("conversation", None)
    facts.setdefault("leafAfter", leaf_after)
    point.extra["redo"] = facts
    write_checkpoints(files.checkpoints, after)
    return result
