"""The session's checkpoint as its turns and its sub-agent runs reach it: `LockedCheckpoints`
(the parent's turn) and `SubagentCheckpoints` (a run).

A run's `Conversation` takes this in place of a `CheckpointManager`: its edits are backed up into
the parent's current checkpoint (`backup_before_edit` before the write, `record_after_edit`
after), its `bash` calls go through the parent's shell tracking, and it opens no checkpoint of
its own (`Conversation(opens_checkpoint=False)`). Every call into the manager, the parent
turn's and the runs', is made under the session's one lock (runs go on in threads of their own,
a background one while the parent's next turn opens its checkpoint).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...checkpoints.manager import CheckpointManager


class LockedCheckpoints:
    """The session's `manager` with each call made under `lock` (the parent turn's view)."""

    def __init__(self, manager: CheckpointManager, lock: threading.Lock) -> None:
        self._manager = manager
        self._lock = lock

    def open_checkpoint(self, prompt: str, message_count: int, last_message_id: str | None,
                        leaf_entry_id: str | None = None) -> None:
        with self._lock:
            self._manager.open_checkpoint(prompt, message_count, last_message_id, leaf_entry_id)

    def backup_before_edit(self, path: str) -> list[str]:
        with self._lock:
            return self._manager.backup_before_edit(path)

    def record_after_edit(self, path: str) -> None:
        with self._lock:
            self._manager.record_after_edit(path)

    def before_shell(self) -> list[str]:
        with self._lock:
            return self._manager.before_shell()

    def after_shell(self) -> list[str]:
        with self._lock:
            return self._manager.after_shell()

    def flush(self) -> None:
        with self._lock:
            self._manager.flush()

    def take_notices(self) -> list[str]:
        with self._lock:
            return self._manager.take_notices()


class SubagentCheckpoints(LockedCheckpoints):
    """The parent's `manager` as a sub-agent run's tools see it (see the module docstring)."""

    def open_checkpoint(self, prompt: str, message_count: int, last_message_id: str | None,
                        leaf_entry_id: str | None = None) -> None:
        """Never called for a run (its prompt opens no checkpoint): the parent's turn has one."""
        del prompt, message_count, last_message_id, leaf_entry_id

    def flush(self) -> None:
        """Nothing at a run's commit: the after-edit digests it recorded reach disk with the
        parent's next backup, checkpoint or end-of-turn flush (they only sharpen outside-edit
        detection; a crash before that never loses a backup)."""

    def take_notices(self) -> list[str]:
        """The retention notice is the parent turn's to show: a run takes none."""
        return []
