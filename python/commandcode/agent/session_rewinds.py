"""The checkpoint and rewind methods of `AgentSession` (mixed into it): listing the checkpoints
with the rewinds each offers, rewinding and redoing through the open session's own writer and
checkpoint manager, and finishing a restore a crash interrupted. The work is `checkpoints/`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..checkpoints.modes import RewindMode
from ..checkpoints.records import Checkpoint, read_checkpoints
from ..checkpoints.redo_points import redoable, require_undoable, undoable
from ..checkpoints.rewind import (
    RewindResult,
    available_modes,
    checkpoint_numbers,
    find_checkpoint,
    recover_pending,
    redo,
    rewind,
    summaries_blocked,
)
from ..errors import CheckpointError
from ..sessions.files import SessionFiles
from .locate import session_folder
from .summarize import Summarizer

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..checkpoints.manager import CheckpointManager
    from ..sessions.reader import Session
    from ..sessions.writer import SessionWriter


class CheckpointChoice:
    """One row of `checkpoints list`: the number it is chosen by, its record, the rewinds it offers."""

    __slots__ = ("number", "record", "modes")

    def __init__(self, number: int, record: Checkpoint, modes: list[RewindMode]) -> None:
        self.number, self.record, self.modes = number, record, modes


class RewindMethods:
    """`AgentSession`'s checkpoints and rewinds; needs the attributes below from it."""

    files: SessionFiles
    summarizer: Summarizer
    notify: Callable[[str], None]
    _writer: SessionWriter | None
    _checkpoints: CheckpointManager | None

    def reload_context(self, session: Session | None = None) -> None: ...

    def recover_interrupted_restore(self, *, allow_outside: bool = False) -> None:
        """Completes (or, for a journal of an older release, undoes) a restore of this session that
        a crash interrupted, and says so: the user sees which state their files are in. The journal
        may name nothing outside the session's folder (`allow_outside`: a rewind the user lets out of it)."""
        folder = None if allow_outside else session_folder(self.files)
        outcome = recover_pending(self.files, folder, writer=self._writer)
        if outcome is not None:
            state, targets = outcome
            verb = "finished" if state == "completed" else "undid"
            self.notify(f"{verb} a restore of session {self.files.session_id} that was interrupted "
                        f"({len(targets)} file(s))")

    def checkpoint_records(self) -> list[Checkpoint]:
        """The session's checkpoint records, as on disk."""
        return read_checkpoints(self.files.checkpoints)

    def checkpoint_choices(self, *, include_rewound: bool = False) -> list[CheckpointChoice]:
        """Every checkpoint on the conversation's path with its number and the rewinds it offers
        (`checkpoints list`); `include_rewound` adds the ones a rewind passed (`--all`)."""
        records = self.checkpoint_records()
        has_transcript = self.files.transcript.exists()
        blocked = summaries_blocked(self.files, records)
        return [CheckpointChoice(number, record, available_modes(records, index, has_transcript=has_transcript,
                                                                 summarizable=record.id not in blocked))
                for index, (record, number) in enumerate(zip(records, checkpoint_numbers(records)))
                if number and (include_rewound or not record.rewound)]

    def offered_modes(self, number: int) -> tuple[Checkpoint, list[RewindMode]]:
        """Checkpoint `number` and the rewinds it offers.

        Raises:
            UsageError: there is no such checkpoint.
        """
        records = self.checkpoint_records()
        index = find_checkpoint(records, number)
        return records[index], available_modes(records, index, has_transcript=self.files.transcript.exists(),
                                               summarizable=records[index].id not in summaries_blocked(self.files, records))

    def rewind(self, number: int, mode: RewindMode, *, dry_run: bool = False, force: bool = False,
               allow_outside: bool = False, diff: bool = False, faults: dict[str, int] | None = None) -> RewindResult:
        """Rewinds to just before turn `number` (see `checkpoints.rewind.rewind`), confined to
        the session's folder unless `allow_outside`; while the session is open for writing, through
        its own writer and checkpoint manager. `diff` adds diffs to a dry run's preview; `faults` are the
        native restore's test hooks."""
        result = rewind(self.files, session_folder(self.files), number, mode, dry_run=dry_run, force=force,
                        allow_outside=allow_outside, diff=diff, writer=self._writer, checkpoints=self._checkpoints,
                        summarizer=self.summarizer, faults=faults)
        if not dry_run and self._writer is not None:  # the leaf moved: the next turn sends the rewound context
            self.reload_context()
        return result

    def redo(self, *, dry_run: bool = False, force: bool = False, allow_outside: bool = False, diff: bool = False,
             faults: dict[str, int] | None = None) -> RewindResult:
        """Undoes the newest rewind not undone yet (see `checkpoints.rewind.redo`), like `rewind`."""
        result = redo(self.files, session_folder(self.files), dry_run=dry_run, force=force, allow_outside=allow_outside,
                      diff=diff, writer=self._writer, checkpoints=self._checkpoints, faults=faults)
        if not dry_run and self._writer is not None:
            self.reload_context()
        return result

    def redo_refusal(self) -> str | None:
        """Why the newest rewind cannot be undone although there is one (turns were made since
        it: a redo would overwrite them), in `redo`'s own words; None when it can be, or when
        there is nothing to undo."""
        records = self.checkpoint_records()
        if undoable(records) is None:
            return None
        try:
            require_undoable(records)
        except CheckpointError as error:
            return str(error)
        return None

    def can_redo(self) -> bool:
        """Whether a rewind of this session can be undone (`redo`): there is one, and no turn was
        made since (a redo would overwrite that turn's edits, so it is refused)."""
        return redoable(self.checkpoint_records()) is not None
