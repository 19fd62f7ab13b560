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
from pathlib import Path

from ..errors import CheckpointError, RestoreError
from ..sessions.files import SessionFiles
from ..sessions.writer import SessionWriter
from ..storage.lock import WriterLock
from ..storage.signals import deferred_signals
from . import store as backups
from .manager import CheckpointManager
from .modes import RewindMode
from .records import read_checkpoints, write_checkpoints
from .rewind_code import restore_code
from .rewind_conversation import Summarize, apply_conversation, plan_conversation
from .rewind_numbers import available_modes, checkpoint_numbers, find_checkpoint
from .rewind_result import RewindResult, SkippedFile

__all__ = ["RewindMode", "RewindResult", "SkippedFile", "Summarize", "available_modes", "checkpoint_numbers",
           "find_checkpoint", "recover_pending", "rewind"]


def recover_pending(files: SessionFiles, root: Path | None, *, store: backups.BackupStore | None = None
                    ) -> tuple[str, list[Path]] | None:
    """Finishes or undoes a restore of this session that a crash interrupted, its journal checked
    against the confinement `root` first (see `store.recover_pending`); `None` when there was none."""
    return backups.recover_pending(files, root, store=store)


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
    summarizer: Summarize | None = None,
    faults: dict[str, int] | None = None,
) -> RewindResult:
    """Rewinds session `files` (working directory `cwd`) to checkpoint `number`.

    Everything that can be checked is checked before anything is written: the checkpoint and
    mode, the writer lock, the conversation's starting point, then the code restore (itself
    verified before it writes); the conversation moves last. An agent rewinding its own session
    passes the `writer` it holds and its `checkpoints` manager (flushed before, reloaded after,
    so neither side overwrites the other); `summarizer` writes the summary of the summarizing
    modes (the agent passes its provider's); `faults` passes test hooks to the native restore.

    Raises:
        CheckpointError: no such checkpoint, or the mode is not offered for it.
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
                       store=store, writer=writer, summarizer=summarizer, faults=faults)
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
    summarizer: Summarize | None,
    faults: dict[str, int] | None,
) -> RewindResult:
    records = read_checkpoints(files.checkpoints)
    index = find_checkpoint(records, number)
    offered = available_modes(records, index, has_transcript=files.transcript.exists())
    if mode not in offered:
        choices = ", ".join(choice.value for choice in offered) or "none"
        raise CheckpointError(f"checkpoint {number} does not offer --mode {mode.value}; it offers: {choices}")
    result = RewindResult(number=number, mode=mode, dry_run=dry_run)
    store = store if store is not None else backups.BackupStore()
    with contextlib.ExitStack() as stack:
        if writer is None and not dry_run:
            if mode is RewindMode.CODE:
                stack.enter_context(WriterLock(files.transcript))
            else:
                writer = stack.enter_context(SessionWriter(files, str(cwd)))
        conversation = None
        if mode is not RewindMode.CODE:
            conversation = plan_conversation(files, records, index, mode, number, dry_run=dry_run,
                                             summarizer=summarizer)
            result.leaf_entry_id = conversation.target
        if not dry_run:
            # From the first file written to the checkpoints file, a Ctrl-C or `kill` waits: code,
            # conversation and checkpoints land together, then the signal is delivered.
            stack.enter_context(deferred_signals())
        if mode.restores_code:
            restore_code(files, cwd, records, index, result, store=store, force=force,
                         allow_outside=allow_outside, faults=faults)
        if conversation is None or dry_run:
            return result
        assert writer is not None
        try:
            apply_conversation(writer, conversation, records, index, result)
        except Exception as error:
            if mode is RewindMode.BOTH:
                raise RestoreError(f"the files were restored, but the conversation was not moved: {error}") from error
            raise
        if result.dropped_checkpoints:
            write_checkpoints(files.checkpoints, records)
    return result
