"""What one replica of the share service holds in memory: the shares its viewers follow.

A share is loaded from the store when its first viewer arrives (its record and every row); then a
notification (PostgreSQL `LISTEN`, or a poll of the SQLite file) names the share and its last
seq, and the hub reads the rows after the ones it has, once, for all of its viewers, and wakes
them. After the listener (re)connects — a database restart loses notifications — it re-reads every
share it holds. Expiry is checked against the clock about every second on every replica, and a
revocation is a notification, so both end the streams everywhere at once.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from ...errors import ShareServiceError
from .store import Row, ShareRecord, SqlStore


class LiveShare:
    """One share's record and rows (`rows[i]` has seq `i + 1`), and the condition its streams wait on."""

    def __init__(self, record: ShareRecord, rows: list[Row]) -> None:
        self.record = record
        self.rows = rows
        self.ended: str | None = record.ended()
        self.changed = threading.Condition()

    def last(self) -> int:
        return len(self.rows)


class Hub:
    """The shares this replica serves, kept current from the store's notifications."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self.shares: dict[str, LiveShare] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.behind = False  # a read failed: the next tick reads everything again

    def get(self, share_id: str) -> LiveShare | None:
        """The share (loaded on first use), or None when the store has no such share.

        Raises:
            ShareServiceError: the store is unavailable (only when not already loaded).
        """
        with self.lock:
            live = self.shares.get(share_id)
        if live is not None:
            return live
        record = self.store.share(share_id)
        if record is None:
            return None
        rows = self.store.rows_after(share_id, 0)
        with self.lock:
            live = self.shares.setdefault(share_id, LiveShare(record, rows))
        self._catch_up(live)  # a notification that came while it loaded named a share not held yet
        return live

    def changed(self, share_id: str, what: str) -> None:
        """A notification: new rows up to seq `what`, or `info` (revoked, new expiry)."""
        with self.lock:
            live = self.shares.get(share_id)
        if live is None:
            return
        try:
            if what == "info":
                record = self.store.share(share_id)
                if record is not None:
                    with live.changed:
                        live.record = record
                        live.ended = record.ended()
                        live.changed.notify_all()
                return
            if what.isdigit() and int(what) <= live.last():
                return
            self._catch_up(live)
        except ShareServiceError as error:
            if not self.behind:
                print(f"share service: cannot read share {share_id}: {error}", file=sys.stderr, flush=True)
            self.behind = True

    def _catch_up(self, live: LiveShare) -> None:
        rows = self.store.rows_after(live.record.id, live.last())
        with live.changed:
            for row in rows:
                if row[0] == live.last() + 1:
                    live.rows.append(row)
            live.changed.notify_all()

    def resync(self) -> None:
        """Re-reads every share held (after the listener reconnected, or on each SQLite poll)."""
        self.behind = False
        with self.lock:
            held = list(self.shares)
        for share_id in held:
            self.changed(share_id, "info")
            with self.lock:
                live = self.shares.get(share_id)
            if live is not None:
                try:
                    self._catch_up(live)
                except ShareServiceError:
                    self.behind = True  # the store is still away: the next tick tries again
                    return

    def tick(self) -> None:
        """Ends the streams of shares that expired by now; reads again after a failed read."""
        if self.behind:
            self.resync()
        with self.lock:
            held = list(self.shares.values())
        for live in held:
            if live.ended is None and live.record.ended() is not None:
                with live.changed:
                    live.ended = live.record.ended()
                    live.changed.notify_all()

    def run(self) -> None:
        """The listener thread: until `stopping` is set."""
        listen: Any = getattr(self.store, "listen", None)
        if listen is not None:
            listen(self.changed, self.resync, self.stopping, self.tick)
            return
        poll = float(getattr(self.store, "poll_seconds", 0.1))
        while not self.stopping.wait(poll):
            self.resync()
            self.tick()

    def stop(self) -> None:
        self.stopping.set()
        with self.lock:
            held = list(self.shares.values())
        for live in held:
            with live.changed:
                live.changed.notify_all()
