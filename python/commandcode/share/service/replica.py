"""One replica of the team share service as a process: uvicorn serving `app.ShareApp` on a socket
of its own, the hub's listener thread, and a clean stop on SIGTERM or Ctrl-C.

The only module that imports uvicorn (the `share-service` extra; `share serve --store` is its only
caller, so no other command pays for it). uvicorn's pure-Python HTTP/1.1 protocol (h11) is
subclassed so that a connection from an address already holding `max_per_client` connections is
answered 429 and closed as it is accepted, before any request is read; the streams get a way to
drop their connection at once (`app.ABORT`: a viewer that stopped reading has a full buffer that
a polite close would wait on forever). uvicorn's own log lines are silenced: the app reports a
failed request in one line itself. On a stop, every event stream ends cleanly (its viewers resume
on another replica from their `Last-Event-ID`) before the process exits.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import threading
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .app import ABORT, TOO_MANY_TEXT, ShareApp
from .clients import Clients

TOO_MANY = (b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
            + str(len(TOO_MANY_TEXT)).encode() + b"\r\nConnection: close\r\n\r\n" + TOO_MANY_TEXT)
BACKLOG = 1024
STOP_SECONDS = 5


def _protocol(clients: Clients) -> type:
    """uvicorn's h11 protocol, capped per client address and able to abort."""
    class LimitedProtocol(H11Protocol):
        counted: str | None = None
        refused = False

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            inner = self.app

            async def app(scope: Any, receive: Any, send: Any) -> None:
                scope[ABORT] = self._abort
                await inner(scope, receive, send)

            self.app = app

        def _abort(self) -> None:
            """Drops the connection with a reset: what its buffers still hold for it is discarded
            (a plain close would leave the kernel trickling megabytes to a viewer that never reads)."""
            if self.transport is None:
                return
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                try:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass
            self.transport.abort()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            peer = str(self.client[0]) if self.client else ""
            if clients.trusted(peer):
                return  # a load balancer: the app counts each request for its client
            if not clients.take(peer):
                self.refused = True
                transport.write(TOO_MANY)
                transport.close()
                return
            self.counted = peer

        def data_received(self, data: bytes) -> None:
            if not self.refused:
                super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            if self.counted is not None:
                clients.release(self.counted)
                self.counted = None
            super().connection_lost(exc)

    return LimitedProtocol


def listen(host: str, port: int) -> socket.socket:
    """The replica's listening socket (reusable at once after a replica on that port was killed).

    Raises:
        OSError: the address is taken or not ours.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(BACKLOG)
    except OSError:
        listener.close()
        raise
    listener.setblocking(False)
    return listener


def run(app: ShareApp, listener: socket.socket) -> None:
    """Serves until SIGTERM or SIGINT (which it re-raises once everything has stopped)."""
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [logging.NullHandler()]
        logger.propagate = False

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            app.hub.loop = asyncio.get_running_loop()
            listener_thread = threading.Thread(target=app.hub.run, name="share-listen", daemon=True)
            listener_thread.start()
            await super().startup(sockets)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            app.hub.stop()  # every stream ends now, so the connections close
            await super().shutdown(sockets)

    config = uvicorn.Config(app, http=_protocol(app.clients), lifespan="off", log_config=None, access_log=False,
                            proxy_headers=False, server_header=False, backlog=BACKLOG,
                            timeout_graceful_shutdown=STOP_SECONDS)
    try:
        Server(config).run(sockets=[listener])
    finally:
        app.close()
        listener.close()
