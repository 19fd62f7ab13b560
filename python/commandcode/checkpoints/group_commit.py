"""Group commit of the checkpoints file: writers that change the records while a durable write
of it is in flight share the next one, instead of each waiting for a write of its own.

Owns `GroupCommit`, the bookkeeping of `CheckpointManager`'s writes (`manager.py`). Each change
of the records asks for a generation (`request`, under the manager's lock, after the change);
a writer then needs the file durable up to its generation. At most one write is in flight: the
writer that starts it takes the records' bytes under the manager's lock (`begin`: everything
requested so far is in them), writes and fsyncs outside it, then marks its generation durable
(`end`). Writers arriving meanwhile wait (`wait_idle`, never holding the manager's lock unless
their caller does); the first to wake starts the next write, covering every one of them, and
the others find their generation durable and return. So "backed up durably before the write"
holds for each writer, and four concurrent writers cost about two fsyncs of the file instead
of four. A failed write marks nothing durable: each waiter retries and gets its own error.

Lock order: the manager's lock, then this one's; a write in flight holds neither.
"""

from __future__ import annotations

import threading

IN_FLIGHT = -1
"""`begin`'s answer when another write is in flight (wait for it, then ask again)."""

DURABLE = 0
"""`begin`'s answer when the generation asked about is durable already."""


class GroupCommit:
    """The generations asked for and made durable, and whether a write is in flight."""

    def __init__(self) -> None:
        self._condition = threading.Condition(threading.Lock())
        self._requested = 0
        self._durable = 0
        self._writing = False

    def request(self) -> int:
        """A new generation: the records changed (call under the manager's lock, after the change)."""
        with self._condition:
            self._requested += 1
            return self._requested

    @property
    def requested(self) -> int:
        """The newest generation asked for."""
        with self._condition:
            return self._requested

    def begin(self, generation: int) -> int:
        """Starts the write of everything requested so far, when `generation` is not durable and
        no write is in flight: returns the generation the write covers (> 0). Else `DURABLE` or
        `IN_FLIGHT`. Call under the manager's lock, and take the bytes before releasing it."""
        with self._condition:
            if self._durable >= generation:
                return DURABLE
            if self._writing:
                return IN_FLIGHT
            self._writing = True
            return self._requested

    def end(self, covered: int | None) -> None:
        """Ends the write in flight: `covered` (what `begin` returned) is durable; None: it failed."""
        with self._condition:
            self._writing = False
            if covered is not None and covered > self._durable:
                self._durable = covered
            self._condition.notify_all()

    def wait_idle(self) -> None:
        """Waits until no write is in flight."""
        with self._condition:
            self._condition.wait_for(lambda: not self._writing)

    def settle(self) -> None:
        """Everything requested is on disk (the file was just read back whole: a reload)."""
        with self._condition:
            self._condition.wait_for(lambda: not self._writing)
            self._durable = self._requested
