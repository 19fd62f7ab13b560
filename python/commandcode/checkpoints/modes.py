"""The six rewind choices (five modes and cancel) and their labels.

Owns: `RewindMode`. Kept apart from `commandcode.rewind` so the CLI can declare its `--mode`
option without importing the restore machinery on every start.
"""

from __future__ import annotations

from enum import Enum


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
    def moves_conversation(self) -> bool:
        return self in (RewindMode.BOTH, RewindMode.CONVERSATION)


_LABELS = {
    RewindMode.BOTH: "Restore code and conversation",
    RewindMode.CONVERSATION: "Restore conversation only",
    RewindMode.CODE: "Restore code only",
    RewindMode.SUMMARIZE_FROM: "Summarize from here",
    RewindMode.SUMMARIZE_TO: "Summarize up to here",
}
CANCEL_LABEL = "Cancel"
