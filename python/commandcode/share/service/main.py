"""What `commandcode share serve --store URL` and `commandcode share token create|revoke USER
--store URL` and `share token list --store URL` run: the store named by its URL (`postgresql://…` or `postgres://…`, `sqlite:///path`) and the
replica serving it."""

from __future__ import annotations

import errno
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from ...errors import CommandcodeError, UsageError
from .store import SqliteStore, SqlStore

STORE_HINT = "use --store postgresql://user@host/db or --store sqlite:///path/to/shares.db"


def open_store(url: str) -> SqlStore:
    """The store `url` names, its tables made when missing.

    Raises:
        UsageError: not a store URL. ShareServiceError: the store cannot be reached.
    """
    if url.startswith(("postgresql://", "postgres://")):
        from .pgstore import PgStore

        return PgStore(url)
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite://"))
        if not path.parent.is_dir():
            raise UsageError(f"{path.parent} is not a folder", hint=STORE_HINT)
        return SqliteStore(str(path))
    raise UsageError(f"{url!r} is not a share store", hint=STORE_HINT)


def create_token(url: str, user: str) -> str:
    store = open_store(url)
    try:
        return store.create_token(user)
    finally:
        store.close()


def list_tokens(url: str) -> list[tuple[str, int, bool, int]]:
    """The store's users (`SqlStore.users`)."""
    store = open_store(url)
    try:
        return store.users()
    finally:
        store.close()


def revoke_token(url: str, user: str) -> tuple[bool, int]:
    """Revokes `user`'s token and ends their live shares (`SqlStore.revoke_token`): whether the
    token worked until now, how many shares ended.

    Raises:
        CommandcodeError: the store has no such user.
    """
    store = open_store(url)
    try:
        revoked = store.revoke_token(user)
    finally:
        store.close()
    if revoked is None:
        raise CommandcodeError(f"the share store has no user {user!r}",
                               hint="`commandcode share token list --store URL` shows them")
    return revoked


def _interrupt(*_args: object) -> None:
    raise KeyboardInterrupt


def serve(url: str, host: str, port: int, *, max_body: int, max_per_client: int, send_timeout: float = 30.0,
          trusted_proxies: Sequence[str] = ()) -> None:
    """Runs one replica until interrupted (SIGTERM or Ctrl-C). `trusted_proxies`: the load
    balancers whose `X-Forwarded-For` names the client (`clients.py`); `send_timeout`: how long
    a viewer may take nothing before it is dropped.

    Raises:
        UsageError: a trusted proxy is not an address or network. CommandcodeError: the port is
            taken, or uvicorn is not installed.
    """
    from .clients import Clients, parse_networks

    networks = parse_networks(trusted_proxies)
    try:
        from . import replica
    except ImportError as error:
        raise CommandcodeError(f"the share service needs uvicorn ({error})",
                               hint="pip install 'commandcode[share-service]'") from None
    from .app import ShareApp

    try:
        listener = replica.listen(host, port)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise CommandcodeError(f"port {port} is in use on {host}", hint="pick another with --port") from None
        raise CommandcodeError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    try:
        store = open_store(url)
    except BaseException:
        listener.close()
        raise
    app = ShareApp(store, Clients(max_per_client, networks), max_body=max_body, send_timeout=send_timeout)
    signal.signal(signal.SIGTERM, _interrupt)  # uvicorn stops on it first, then raises it again
    bound = listener.getsockname()[1]
    print(f"share service at http://{host}:{bound} (store {url.split('://')[0]}; Ctrl-C to stop)",
          file=sys.stderr, flush=True)
    try:
        replica.run(app, listener)
    except KeyboardInterrupt:
        pass
    finally:
        store.close()
