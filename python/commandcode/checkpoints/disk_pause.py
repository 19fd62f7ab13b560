"""The disk-low pause of a session's checkpointing (`DiskPause`).

When free space is under twice a file's size, the file is not backed up and checkpointing
pauses for the session, with one notice; it resumes, with another, once twice 100 MiB is free.
Thread-safe: a session's sub-agents back files up from threads of their own.
"""

from __future__ import annotations

import threading

from .ledger import format_bytes

RESUME_FREE_BYTES = 2 * 104_857_600


class DiskPause:
    """Whether checkpointing is paused for lack of disk space, and the notices of the changes."""

    def __init__(self) -> None:
        self.paused = False
        self._lock = threading.Lock()

    def space_for(self, free: int | None, size: int, path: str, notices: list[str]) -> bool:
        """Whether a file of `size` bytes may be backed up with `free` bytes free (None: unknown);
        pauses below twice its size, resumes at twice 100 MiB."""
        with self._lock:
            if self.paused:
                if free is None or free >= RESUME_FREE_BYTES:
                    self.paused = False
                    notices.append(f"disk space is available again ({format_bytes(free or 0)} free); "
                                   "checkpointing resumed")
                else:
                    return False
            if free is not None and free < 2 * size:
                self._pause(path, notices, free)
                return False
            return True

    def pause(self, path: str, notices: list[str], free: int | None) -> None:
        """Pauses (a backup of `path` failed for lack of space), with the notice, once."""
        with self._lock:
            self._pause(path, notices, free)

    def _pause(self, path: str, notices: list[str], free: int | None) -> None:
        if self.paused:
            return
        self.paused = True
        shown = "" if free is None else f" ({format_bytes(free)} free)"
        notices.append(
            f"disk space is low{shown}: checkpointing is paused for this session and {path} was not backed up; "
            f"it resumes once {format_bytes(RESUME_FREE_BYTES)} are free"
        )
