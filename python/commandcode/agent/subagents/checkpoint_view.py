"""The session's checkpoint as a sub-agent run reaches it: `SubagentCheckpoints`.

A run's `Conversation` takes this in place of a `CheckpointManager`: its edits are backed up into
the parent's current checkpoint (`editing`: the backup, then the write, no other writer of the
file in between), its `bash` calls go through the parent's shell tracking, and it opens no
checkpoint of its own (`Conversation(opens_checkpoint=False)`). The manager itself is safe for
the parent's turn and its runs writing at once, each from its thread (`checkpoints/manager.py`):
no lock of the session serializes them, so parallel runs back up and write in parallel, and a
background run's write lands before the parent's next turn opens its checkpoint, or after.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...checkpoints.manager import CheckpointManager


class SubagentCheckpoints:
    """The parent's `manager` as a sub-agent run's tools see it (see the module docstring)."""

    def __init__(self, manager: CheckpointManager) -> None:
        self._manager = manager

    def open_checkpoint(self, prompt: str, message_count: int, last_message_id: str | None,
                        leaf_entry_id: str | None = None) -> None:
        """Never called for a run (its prompt opens no checkpoint): the parent's turn has one."""
        del prompt, message_count, last_message_id, leaf_entry_id

    def editing(self, path: str) -> AbstractContextManager[list[str]]:
        return self._manager.editing(path)

    def backup_before_edit(self, path: str) -> list[str]:
        return self._manager.backup_before_edit(path)

    def record_after_edit(self, path: str) -> None:
        self._manager.record_after_edit(path)

    def before_shell(self) -> list[str]:
        return self._manager.before_shell()

    def after_shell(self) -> list[str]:
        return self._manager.after_shell()

    def flush(self) -> None:
        """Nothing at a run's commit: the after-edit digests it recorded reach disk with the
        parent's next backup, checkpoint or end-of-turn flush (they only sharpen outside-edit
        detection; a crash before that never loses a backup)."""

    def take_notices(self) -> list[str]:
        """The retention notice is the parent turn's to show: a run takes none."""
        return []
