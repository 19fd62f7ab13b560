"""`SessionRewinds`: a session's checkpoints and rewinds, a collaborator of `AgentSession` taking
the handle: listing the checkpoints with the rewinds each offers, rewinding and redoing through
the open session's own writer and checkpoint manager (the handle's), and finishing a restore a
crash interrupted. The work is `checkpoints/`'s.

Sub-agent runs still going (a background run, or one the user stopped waiting for) are stopped
before a rewind or redo writes anything (`SubagentControl`, the session's turns): a run writing
while its files are restored would leave a tree that is neither state. One notice line names
the runs stopped; a run that does not stop (bounded wait) refuses the rewind with one line, and
nothing is rewound.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from ..checkpoints.modes import RewindMode
from ..checkpoints.records import Checkpoint, read_checkpoints
from ..checkpoints.redo_points import redoable, require_undoable, undoable
from ..checkpoints.rewind import (
    RewindOptions,
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
from .handle import SessionHandle
from .summarize import Summarizer


class CheckpointChoice:
    """One row of `checkpoints list`: the number it is chosen by, its record, the rewinds it offers."""

    __slots__ = ("number", "record", "modes")

    def __init__(self, number: int, record: Checkpoint, modes: list[RewindMode]) -> None:
        self.number, self.record, self.modes = number, record, modes


class SubagentControl(Protocol):
    """The session's sub-agent runs as a rewind sees them (`agent.turns.SessionTurns`)."""

    def running_subagents(self) -> list[str]: ...

    def stop_subagents(self) -> list[str]: ...


class SessionRewinds:
    """One session's checkpoints and rewinds; `summarizer` writes the summary of the summarizing
    rewind modes."""

    def __init__(self, handle: SessionHandle, summarizer: Summarizer) -> None:
        self._handle = handle
        self.summarizer = summarizer
        self.subagents: SubagentControl | None = None  # set once the session's turns exist

    def recover_interrupted_restore(self, *, allow_outside: bool = False) -> None:
        """Completes (or, for a journal of an older release, undoes) a restore of this session that
        a crash interrupted, and says so: the user sees which state their files are in. The journal
        may name nothing outside the session's folder (`allow_outside`: a rewind the user lets out of it)."""
        handle = self._handle
        folder = None if allow_outside else handle.folder
        outcome = recover_pending(handle.files, folder, writer=handle.open_writer)
        if outcome is not None:
            state, targets = outcome
            verb = "finished" if state == "completed" else "undid"
            handle.notify(f"{verb} a restore of session {handle.session_id} that was interrupted "
                          f"({len(targets)} file(s))")

    def checkpoint_records(self) -> list[Checkpoint]:
        """The session's checkpoint records, as on disk."""
        return read_checkpoints(self._handle.files.checkpoints)

    def checkpoint_choices(self, *, include_rewound: bool = False) -> list[CheckpointChoice]:
        """Every checkpoint on the conversation's path with its number and the rewinds it offers
        (`checkpoints list`); `include_rewound` adds the ones a rewind passed (`--all`)."""
        records = self.checkpoint_records()
        files = self._handle.files
        has_transcript = files.transcript.exists()
        blocked = summaries_blocked(files, records)
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
        files = self._handle.files
        return records[index], available_modes(records, index, has_transcript=files.transcript.exists(),
                                               summarizable=records[index].id not in summaries_blocked(files, records))

    def rewind(self, number: int, mode: RewindMode, options: RewindOptions | None = None) -> RewindResult:
        """Rewinds to just before turn `number` (see `checkpoints.rewind.rewind`), confined to
        the session's folder unless `options.allow_outside`; while the session is open for writing,
        through its own writer and checkpoint manager (those and the summarizer are filled in)."""
        handle = self._handle
        chosen = self._own(options, summarizer=self.summarizer)
        if not chosen.dry_run:
            self._stop_subagents()
        result = rewind(handle.files, handle.folder, number, mode, chosen)
        if result.skipped_lines:  # as a resume tells them (handle.enter)
            handle.notify(f"{handle.files.transcript.name}: {result.skipped_lines} unreadable line(s) skipped")
        if not chosen.dry_run and handle.is_open:  # the leaf moved: the next turn sends the rewound context
            handle.reload_context()
        return result

    def redo(self, options: RewindOptions | None = None) -> RewindResult:
        """Undoes the newest rewind not undone yet (see `checkpoints.rewind.redo`), like `rewind`."""
        handle = self._handle
        chosen = self._own(options, summarizer=None)
        if not chosen.dry_run:
            self._stop_subagents()
        result = redo(handle.files, handle.folder, chosen)
        if not chosen.dry_run and handle.is_open:
            handle.reload_context()
        return result

    def _stop_subagents(self) -> None:
        """Stops the session's running sub-agent runs before a rewind writes (see the module docs).

        Raises:
            CheckpointError: a run did not stop; nothing was rewound.
        """
        control = self.subagents
        if control is None or not control.running_subagents():
            return
        stopped = control.stop_subagents()
        still = control.running_subagents()
        if still:
            raise CheckpointError(f"sub-agent {', '.join(still)} is still running and did not stop; nothing was rewound",
                                  hint="wait for it to end (or `agent_output` kill it), then rewind again")
        self._handle.notify(f"stopped {len(stopped)} running sub-agent{'s' if len(stopped) != 1 else ''} "
                            f"({', '.join(stopped)}) before rewinding")

    def _own(self, options: RewindOptions | None, *, summarizer: Summarizer | None) -> RewindOptions:
        """`options` (the defaults when None) run through this session's writer and manager."""
        handle = self._handle
        return replace(options or RewindOptions(), writer=handle.open_writer, checkpoints=handle.manager,
                       summarizer=summarizer)

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
