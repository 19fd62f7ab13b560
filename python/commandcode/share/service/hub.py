"""What one replica of the share service holds in memory: the shares its viewers follow.

A share is loaded from the store when its first viewer arrives (its record and every row); then a
notification (PostgreSQL `LISTEN`, or a poll of the SQLite file) names the share and its last
seq, and the hub reads the rows after the ones it has, once, for all of its viewers, and wakes
them. The reads run in threads (the listener's, the replica's store pool); the event streams wait
in the replica's event loop, woken through `loop.call_soon_threadsafe`. After the listener (re)connects — a database restart loses notifications — it re-reads every
share it holds. Expiry is checked against the clock about every second on every replica, and a
revocation is a notification, so both end the streams everywhere at once.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from typing import Any

from ...errors import ShareServiceError
from .store import Row, ShareRecord, SqlStore


def event(row: Row) -> bytes:
    """A row as its server-sent event (`id:` its seq), encoded once for every stream."""
    seq, kind, html, messages = row
    return (f"id: {seq}\nevent: {kind}\ndata: {json.dumps({'html': html, 'messages': messages})}\n\n"
            .encode("utf-8", "surrogateescape"))


class LiveShare:
    """One share's record and rows (`rows[i]` has seq `i + 1`, `events[i]` is its event; both
    changed only under `lock`, by any thread) and the future its streams wait on in `loop`
    (resolved by `wake()`, then renewed)."""

    def __init__(self, record: ShareRecord, rows: list[Row], loop: asyncio.AbstractEventLoop | None) -> None:
        self.record = record
        self.lock = threading.Lock()
        self.rows: list[Row] = []
        self.events: list[bytes] = []
        self.add(rows)
        self.ended: str | None = record.ended()
        self.loop = loop
        self._changed: asyncio.Future[None] | None = None

    def last(self) -> int:
        return len(self.rows)

    def add(self, rows: list[Row]) -> bool:
        """Appends those of `rows` that follow the last one held; whether any did."""
        added = False
        with self.lock:
            for row in rows:
                if row[0] == len(self.rows) + 1:
                    self.rows.append(row)
                    self.events.append(event(row))
                    added = True
        return added

    def wake(self) -> None:
        """From any thread: the streams waiting on `changed()` look again."""
        if self.loop is not None:
            try:
                self.loop.call_soon_threadsafe(self._wake)
            except RuntimeError:
                pass  # the loop has closed: the replica is stopping

    def _wake(self) -> None:
        if self._changed is not None and not self._changed.done():
            self._changed.set_result(None)
        self._changed = None

    def changed(self) -> asyncio.Future[None]:
        """In the loop: resolved at the next change (check the rows before awaiting: no change is
        missed, since `wake()` resolves it only after the change it reports was made)."""
        if self._changed is None:
            assert self.loop is not None
            self._changed = self.loop.create_future()
        return self._changed


class Hub:
    """The shares this replica serves, kept current from the store's notifications."""

    def __init__(self, store: SqlStore, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.store = store
        self.loop = loop  # where the streams wait (set before the first `get`)
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
            live = self.shares.setdefault(share_id, LiveShare(record, rows, self.loop))
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
                    with live.lock:
                        live.record = record
                        live.ended = record.ended()
                    live.wake()
                return
            if what.isdigit() and int(what) <= live.last():
                return
            self._catch_up(live)
        except ShareServiceError as error:
            if not self.behind:
                print(f"share service: cannot read share {share_id}: {error}", file=sys.stderr, flush=True)
            self.behind = True

    def _catch_up(self, live: LiveShare) -> None:
        if live.add(self.store.rows_after(live.record.id, live.last())):
            live.wake()

    def stored(self, share_id: str, rows: list[Row]) -> None:
        """Rows this replica just stored: its viewers get them with no read and no notification."""
        with self.lock:
            live = self.shares.get(share_id)
        if live is not None and live.add(sorted(rows)):
            live.wake()

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
                with live.lock:
                    live.ended = live.record.ended()
                live.wake()

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
            live.wake()
