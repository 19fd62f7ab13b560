"""`--store postgresql://…`: the share service's tables in PostgreSQL, for several replicas.

The only module that imports psycopg (3, the `share-service` extra). A small pool of connections
(a connection that failed is dropped, the next request connects again: a restarted database only
costs the requests made while it was down, each a 503). A commit of rows tells every replica with
`NOTIFY commandcode_share, '<share id> <last seq>'` (`info` for a revocation or a new expiry):
ids only, far below PostgreSQL's 8,000-byte payload limit; the replicas read the rows from the
table. `listen()` is the replicas' side: one connection per replica, reconnecting after a restart.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import CommandcodeError, ShareServiceError
from .store import SqlStore

CHANNEL = "commandcode_share"
POOL_SIZE = 8
CONNECT_SECONDS = 5
_SCHEMA_LOCK = 29_029


def _import() -> Any:
    try:
        import psycopg
    except ImportError:
        raise CommandcodeError("a PostgreSQL store needs psycopg", hint="pip install 'commandcode[share-service]'") from None
    return psycopg


def _reason(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]


class PgStore(SqlStore):
    """The tables in PostgreSQL (`url` as libpq takes it: `postgresql://user@host/db?host=/socket/dir`)."""

    def __init__(self, url: str) -> None:
        self.psycopg = _import()
        self.url = url
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(POOL_SIZE)
        self.create_schema()

    def _connect(self) -> Any:
        return self.psycopg.connect(self.url, connect_timeout=CONNECT_SECONDS, autocommit=False)

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        psycopg = self.psycopg
        with self._slots:
            try:
                connection = self._idle.get_nowait()
            except queue.Empty:
                connection = None
            try:
                if connection is None or connection.closed:
                    connection = self._connect()
                try:
                    yield connection
                except BaseException:
                    if not connection.closed:
                        connection.rollback()
                    raise
                connection.commit()
            except psycopg.errors.ReadOnlySqlTransaction:
                self._keep(connection)
                raise ShareServiceError("the share store is read-only; nothing was stored",
                                        hint="the database refuses writes (a standby, or default_transaction_read_only)") from None
            except psycopg.OperationalError as error:
                self._drop(connection)
                raise ShareServiceError(f"the share store is unavailable: {_reason(error)}") from None
            except psycopg.Error as error:
                self._keep(connection)
                raise ShareServiceError(f"the share store failed the request (nothing was kept): {_reason(error)}") from None
            self._keep(connection)

    def _keep(self, connection: Any) -> None:
        if connection is None:
            return
        if connection.closed or connection.broken:
            return
        try:
            if connection.info.transaction_status != self.psycopg.pq.TransactionStatus.IDLE:
                connection.rollback()
        except self.psycopg.Error:
            self._drop(connection)
            return
        self._idle.put(connection)

    def _drop(self, connection: Any) -> None:
        if connection is not None:
            try:
                connection.close()
            except self.psycopg.Error:
                pass

    def _lock_schema(self, cursor: Any) -> None:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))

    def _notify(self, cursor: Any, share_id: str, what: str) -> None:
        cursor.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{share_id} {what}"))

    def listen(self, on_change: Callable[[str, str], None], on_resync: Callable[[], None],
               stopping: threading.Event, on_tick: Callable[[], None]) -> None:
        """Calls `on_change(share_id, what)` for every notification, `on_resync()` after every
        (re)connection (notifications sent while it was away are lost: the hub re-reads what it
        shows), `on_tick()` about every second; returns when `stopping` is set."""
        psycopg = self.psycopg
        connection = None
        while not stopping.is_set():
            try:
                if connection is not None and (connection.closed or connection.broken):
                    self._drop(connection)  # the database went away (a restart): connect again, then re-read
                    connection = None
                if connection is None:
                    connection = psycopg.connect(self.url, connect_timeout=CONNECT_SECONDS, autocommit=True)
                    connection.execute(f"LISTEN {CHANNEL}")
                    self.close()  # the pool's idle connections may be to a database that went away meanwhile
                    on_resync()
                for note in connection.notifies(timeout=1.0):
                    share_id, _, what = note.payload.partition(" ")
                    on_change(share_id, what)
                on_tick()
            except psycopg.Error:
                self._drop(connection)
                connection = None
                on_tick()
                stopping.wait(0.2)
        self._drop(connection)

    def close(self) -> None:
        while True:
            try:
                self._drop(self._idle.get_nowait())
            except queue.Empty:
                return
