"""The share service's tables (docs/format.md §14.3) and every query on them, for both stores.

`SqlStore` holds the SQL; a store names its connection and its errors: `SqliteStore` here (one
file, one machine: `--store sqlite:///path`), `PgStore` in `pgstore.py` (PostgreSQL, several
replicas on one database; the only module that imports psycopg). Tokens and viewer secrets are
kept as their SHA-256 (both are 32 random bytes: no salt or stretching needed); rows are the
rendered, redacted html rows a publisher sends, kept by `(share_id, seq)` so a replayed outbox
stores nothing twice. Every failure of the store is a `ShareServiceError` (503 unless it says
otherwise) with one line; nothing of a failed request is kept.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import ShareServiceError

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS share_users (name TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, "
    "created_ms BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS shares (id TEXT PRIMARY KEY, owner TEXT NOT NULL REFERENCES share_users(name), "
    "session_id TEXT NOT NULL, title TEXT NOT NULL, secret_hash TEXT NOT NULL, created_ms BIGINT NOT NULL, "
    "expires_ms BIGINT, revoked_ms BIGINT)",
    "CREATE INDEX IF NOT EXISTS shares_owner_session ON shares (owner, session_id)",
    "CREATE TABLE IF NOT EXISTS share_rows (share_id TEXT NOT NULL REFERENCES shares(id), seq BIGINT NOT NULL, "
    "kind TEXT NOT NULL, html TEXT NOT NULL, messages INTEGER NOT NULL, PRIMARY KEY (share_id, seq))",
)
KINDS = ("row", "reset")
REVOKED = "revoked:"  # a `token_hash` so marked matches no token
_USER = "^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def now_ms() -> int:
    return int(time.time() * 1000)


class ShareRecord:
    """One share as the `shares` table holds it."""

    __slots__ = ("expires_ms", "id", "owner", "revoked_ms", "secret_hash", "session_id", "title")

    def __init__(self, values: tuple[Any, ...]) -> None:
        (self.id, self.owner, self.session_id, self.title, self.secret_hash, self.expires_ms,
         self.revoked_ms) = values

    def ended(self, at_ms: int | None = None) -> str | None:
        """Why the share no longer shows (revoked, expired), or None while it is live."""
        if self.revoked_ms is not None:
            return "the share was revoked"
        if self.expires_ms is not None and self.expires_ms <= (now_ms() if at_ms is None else at_ms):
            return "the share expired"
        return None

    def secret_ok(self, given: str) -> bool:
        return secrets.compare_digest(digest(given), self.secret_hash)


Row = tuple[int, str, str, int]  # seq, kind ("row" | "reset"), html, messages
_SHARE_COLUMNS = "id, owner, session_id, title, secret_hash, expires_ms, revoked_ms"


class SqlStore:
    """The queries; subclasses give `_connection()` (a context yielding a DB-API connection in a
    transaction) and `_notify(share_id, what)` (telling the other replicas, inside that transaction)."""

    placeholder = "%s"
    lock_share = " FOR UPDATE"

    def _sql(self, text: str) -> str:
        return text if self.placeholder == "%s" else text.replace("%s", self.placeholder)

    @contextmanager
    def _connection(self) -> Iterator[Any]:  # pragma: no cover - every store overrides it
        raise NotImplementedError
        yield

    def _notify(self, cursor: Any, share_id: str, what: str) -> None:
        del cursor, share_id, what

    def _run(self, cursor: Any, text: str, args: tuple[Any, ...] = ()) -> Any:
        cursor.execute(self._sql(text), args)
        return cursor

    def create_schema(self) -> None:
        with self._connection() as connection:
            cursor = connection.cursor()
            self._lock_schema(cursor)
            for statement in SCHEMA:
                cursor.execute(statement)

    def _lock_schema(self, cursor: Any) -> None:
        del cursor

    # -- users ---------------------------------------------------------------------------------

    def create_token(self, user: str) -> str:
        """A new publisher token for `user` (made if new); an older token of theirs stops working."""
        import re

        if not re.match(_USER, user):
            raise ShareServiceError(f"{user!r} is not a user name", status=400,
                                    hint="use letters, digits and . _ @ - (up to 64)")
        token = "ccs_" + secrets.token_urlsafe(32)
        with self._connection() as connection:
            cursor = connection.cursor()
            if self._run(cursor, "SELECT name FROM share_users WHERE name = %s", (user,)).fetchone():
                self._run(cursor, "UPDATE share_users SET token_hash = %s WHERE name = %s", (digest(token), user))
            else:
                self._run(cursor, "INSERT INTO share_users (name, token_hash, created_ms) VALUES (%s, %s, %s)",
                          (user, digest(token), now_ms()))
        return token

    def users(self) -> list[tuple[str, int, bool, int]]:
        """Every user: name, when made (ms), whether their token works, their live shares."""
        with self._connection() as connection:
            found = self._run(connection.cursor(),
                              "SELECT u.name, u.created_ms, u.token_hash, COUNT(s.id) FROM share_users u "
                              "LEFT JOIN shares s ON s.owner = u.name AND s.revoked_ms IS NULL "
                              "AND (s.expires_ms IS NULL OR s.expires_ms > %s) "
                              "GROUP BY u.name, u.created_ms, u.token_hash ORDER BY u.name", (now_ms(),)).fetchall()
        return [(str(name), int(created), not str(token).startswith(REVOKED), int(live))
                for name, created, token, live in found]

    def revoke_token(self, user: str) -> tuple[bool, int] | None:
        """`user`'s token stops working and each of their live shares ends (its viewers get `end`,
        its page is 410), on every replica at once, in one transaction; a new `create_token` gives
        them a token again, not those shares. Returns (whether the token worked until now, how
        many shares ended), or None when there is no such user."""
        with self._connection() as connection:
            cursor = connection.cursor()
            found = self._run(cursor, "SELECT token_hash FROM share_users WHERE name = %s", (user,)).fetchone()
            if found is None:
                return None
            was_active = not str(found[0]).startswith(REVOKED)
            if was_active:
                # no token's digest (hex) starts so, and the column stays unique and not null
                self._run(cursor, "UPDATE share_users SET token_hash = %s WHERE name = %s",
                          (REVOKED + secrets.token_hex(16), user))
            now = now_ms()
            live_shares = "owner = %s AND revoked_ms IS NULL AND (expires_ms IS NULL OR expires_ms > %s)"
            live = [str(row[0]) for row in self._run(cursor, f"SELECT id FROM shares WHERE {live_shares} ORDER BY id",
                                                     (user, now)).fetchall()]
            if live:
                self._run(cursor, f"UPDATE shares SET revoked_ms = %s WHERE {live_shares}", (now, user, now))
            for share_id in live:
                self._notify(cursor, share_id, "info")
        return was_active, len(live)

    def user_for(self, token: str) -> str | None:
        with self._connection() as connection:
            found = self._run(connection.cursor(), "SELECT name FROM share_users WHERE token_hash = %s",
                              (digest(token),)).fetchone()
        return str(found[0]) if found else None

    # -- shares --------------------------------------------------------------------------------

    def share(self, share_id: str) -> ShareRecord | None:
        with self._connection() as connection:
            found = self._run(connection.cursor(), f"SELECT {_SHARE_COLUMNS} FROM shares WHERE id = %s",
                              (share_id,)).fetchone()
        return ShareRecord(tuple(found)) if found else None

    def open_share(self, user: str, session_id: str, title: str, expires_ms: int | None,
                   share_id: str | None) -> tuple[ShareRecord, str | None, int]:
        """The user's live share of the session (`share_id`, when the publisher names the one it
        has; its expiry updated when given), or a new one. Returns the share, its secret when it
        is new (None: the publisher keeps the one it has) and the last seq stored."""
        with self._connection() as connection:
            cursor = connection.cursor()
            found = None
            if share_id:
                found = self._run(cursor, f"SELECT {_SHARE_COLUMNS} FROM shares WHERE id = %s AND owner = %s "
                                          "AND session_id = %s", (share_id, user, session_id)).fetchone()
            record = ShareRecord(tuple(found)) if found else None
            if record is not None and record.ended() is None:
                if expires_ms is not None:
                    self._run(cursor, "UPDATE shares SET expires_ms = %s WHERE id = %s", (expires_ms, record.id))
                    record.expires_ms = expires_ms
                    self._notify(cursor, record.id, "info")
                last = self._run(cursor, "SELECT COALESCE(MAX(seq), 0) FROM share_rows WHERE share_id = %s",
                                 (record.id,)).fetchone()[0]
                return record, None, int(last)
            secret = secrets.token_urlsafe(24)
            values = (secrets.token_urlsafe(12), user, session_id, title, digest(secret), expires_ms, None)
            self._run(cursor, f"INSERT INTO shares ({_SHARE_COLUMNS}, created_ms) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                      (*values, now_ms()))
            return ShareRecord(values), secret, 0

    def revoke(self, user: str, share_id: str) -> bool:
        """Ends the share for every viewer on every replica; False when it was not live."""
        with self._connection() as connection:
            cursor = connection.cursor()
            record = self._owned(cursor, user, share_id)
            if record.revoked_ms is not None:
                return False
            self._run(cursor, "UPDATE shares SET revoked_ms = %s WHERE id = %s", (now_ms(), share_id))
            self._notify(cursor, share_id, "info")
            return True

    def _owned(self, cursor: Any, user: str, share_id: str) -> ShareRecord:
        found = self._run(cursor, f"SELECT {_SHARE_COLUMNS} FROM shares WHERE id = %s{self.lock_share}",
                          (share_id,)).fetchone()
        if not found:
            raise ShareServiceError("no such share", status=404)
        record = ShareRecord(tuple(found))
        if record.owner != user:
            raise ShareServiceError("this share belongs to another user", status=403)
        return record

    # -- rows ----------------------------------------------------------------------------------

    def append(self, user: str, share_id: str, rows: list[Row]) -> tuple[int, int]:
        """Stores the rows that follow the last one stored; rows already stored (a replayed
        outbox) must be the same and are skipped. Returns (rows stored now, last seq).

        Raises:
            ShareServiceError: not the user's share (403), ended (410), a gap or a replayed seq
                with other content (409), or the store failed (503).
        """
        with self._connection() as connection:
            cursor = connection.cursor()
            record = self._owned(cursor, user, share_id)
            ended = record.ended()
            if ended is not None:
                raise ShareServiceError(ended, status=410)
            last = int(self._run(cursor, "SELECT COALESCE(MAX(seq), 0) FROM share_rows WHERE share_id = %s",
                                 (share_id,)).fetchone()[0])
            stored = 0
            for seq, kind, html, messages in sorted(rows):
                if seq <= last:
                    same = self._run(cursor, "SELECT kind, html FROM share_rows WHERE share_id = %s AND seq = %s",
                                     (share_id, seq)).fetchone()
                    if same is None or (same[0], same[1]) != (kind, html):
                        raise ShareServiceError(f"row {seq} is already stored with other content", status=409)
                    continue
                if seq != last + 1:
                    raise ShareServiceError(f"row {seq} does not follow the last row stored ({last})", status=409)
                self._run(cursor, "INSERT INTO share_rows (share_id, seq, kind, html, messages) "
                                  "VALUES (%s, %s, %s, %s, %s)", (share_id, seq, kind, html, messages))
                last, stored = seq, stored + 1
            if stored:
                self._notify(cursor, share_id, str(last))
            return stored, last

    def rows_after(self, share_id: str, seq: int) -> list[Row]:
        with self._connection() as connection:
            found = self._run(connection.cursor(), "SELECT seq, kind, html, messages FROM share_rows "
                                                   "WHERE share_id = %s AND seq > %s ORDER BY seq",
                              (share_id, seq)).fetchall()
        return [(int(seq_), str(kind), str(html), int(messages)) for seq_, kind, html, messages in found]

    def close(self) -> None:
        """Closes the store's connections."""


class SqliteStore(SqlStore):
    """`--store sqlite:///path`: one file, WAL, one connection per thread; replicas on one
    machine see each other's rows by polling (`hub.py`)."""

    placeholder = "?"
    lock_share = ""
    poll_seconds = 0.05

    def __init__(self, path: str) -> None:
        self.path = path
        self._local = threading.local()
        self.create_schema()

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        connection = getattr(self._local, "connection", None)
        try:
            if connection is None:
                connection = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA foreign_keys=ON")
                self._local.connection = connection
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        except sqlite3.Error as error:
            raise ShareServiceError(f"the share store failed: {' '.join(str(error).split())}") from None
