"""How checkpoints are numbered and which rewinds each one offers (what `checkpoints list` shows)."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import CheckpointError, InvalidSessionError
from .modes import RewindMode
from .records import Checkpoint


def checkpoint_numbers(records: Sequence[Checkpoint]) -> list[int]:
    """The number each checkpoint is shown and chosen by, aligned with `records`: its
    `turnNumber` (1 is the first prompt), or its position among the turns when the file holds
    duplicate or missing numbers; 0 for a redo point (never chosen by number)."""
    turns = [record.turn_number for record in records if not record.is_redo_point]
    if not (len(set(turns)) == len(turns) and all(number > 0 for number in turns)):
        turns = list(range(1, len(turns) + 1))
    numbers = iter(turns)
    return [0 if record.is_redo_point else next(numbers) for record in records]


def find_checkpoint(records: Sequence[Checkpoint], number: int) -> int:
    """The index of checkpoint `number`.

    Raises:
        CheckpointError: there is no such checkpoint (the message lists the ones there are).
        InvalidSessionError: the session has no checkpoints at all (no `--to` would do: a
            refusal, not a usage error).
    """
    numbers = checkpoint_numbers(records)
    if number > 0 and number in numbers:
        return numbers.index(number)
    numbers = [shown for shown in numbers if shown]
    if not numbers:
        raise InvalidSessionError("this session has no checkpoints", hint="a rewind needs a turn recorded with checkpoints")
    raise CheckpointError(f"no checkpoint {number}; this session has {_ranges(numbers)}")


def _ranges(numbers: list[int]) -> str:
    return ", ".join(str(number) for number in numbers) if len(numbers) < 8 else f"{numbers[0]}–{numbers[-1]}"


def available_modes(records: Sequence[Checkpoint], index: int, *, has_transcript: bool,
                    summarizable: bool = True) -> list[RewindMode]:
    """The choices a checkpoint offers. A rewind that would change no file offers no code
    restore; a session with no transcript offers code only; summarizing up to a checkpoint
    needs something before it; a checkpoint a rewind passed (its prompt is not in the
    conversation) offers no summary, only rewinds forward to it, and neither does one a
    compaction passed (`summarizable` False: `rewind_conversation.summaries_blocked`)."""
    has_code = any(item.restorable or item.problem for record in records[index:] for item in record.files)
    modes = []
    if has_transcript:
        if has_code:
            modes.append(RewindMode.BOTH)
        modes.append(RewindMode.CONVERSATION)
    if has_code:
        modes.append(RewindMode.CODE)
    if has_transcript and summarizable and not records[index].rewound:  # a summary is of the conversation as it stands
        modes.append(RewindMode.SUMMARIZE_FROM)
        if records[index].message_count > 0:
            modes.append(RewindMode.SUMMARIZE_TO)
    return modes
