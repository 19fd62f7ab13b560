"""One HTTP POST that streams server-sent events back, on the standard library alone.

`http.client` plus a small SSE reader costs ~30 ms to import where httpx2 costs ~85 ms (see
`benches/bench_provider_import.py`), and a session that never calls a provider imports neither:
this module loads when an HTTP model makes its first request.

`Exchange` sends the request and reads the reply. Interruption: a watcher thread waits on the
turn's `cancel` event and shuts the socket down, which wakes a blocked read at once; the reader
then raises `TurnInterrupted`. The read timeout is per socket read (a server that stops sending
for that long is reported), not for the whole reply.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from ...errors import ProviderError, TurnInterrupted

MAX_ERROR_BODY = 64 * 1024


class Exchange:
    """A POST of `body` (JSON) to `url`; use as a context manager, then read `status`,
    `content_type`, `events()` or `body_text()`."""

    def __init__(self, url: str, body: dict[str, Any], headers: dict[str, str], *, timeout: float,
                 cancel: threading.Event | None, label: str) -> None:
        self.url, self.body, self.headers, self.timeout, self.cancel, self.label = url, body, headers, timeout, cancel, label
        self._connection: http.client.HTTPConnection | None = None
        self._response: http.client.HTTPResponse | None = None
        self._sock: socket.socket | None = None  # kept: a `Connection: close` reply takes it off the connection
        self._done = threading.Event()
        self.status = 0
        self.content_type = ""
        self.retry_after: str | None = None

    def __enter__(self) -> Exchange:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProviderError(f"{self.label}: baseURL {self.url!r} is not an http(s) URL")
        connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self._connection = connection_class(parts.hostname, parts.port, timeout=self.timeout)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        payload = json.dumps(self.body).encode("utf-8")
        where = f"{parts.scheme}://{parts.netloc}"
        self._watch()
        try:
            self._connection.request("POST", path, body=payload, headers={
                **self.headers, "Content-Type": "application/json", "Accept": "text/event-stream, application/json"})
            self._sock = self._connection.sock
            if self.cancel is not None and self.cancel.is_set():
                self._shutdown()  # the watcher may have looked before the socket was there
            self._response = self._connection.getresponse()
        except BaseException as error:
            self.close()
            self._check_cancel()
            raise self._network_error(error, where) from None
        self.status = self._response.status
        self.content_type = (self._response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        self.retry_after = self._response.getheader("Retry-After")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._done.set()
        if self._connection is not None:
            self._connection.close()

    def _watch(self) -> None:
        cancel = self.cancel
        if cancel is None:
            return

        def watch() -> None:
            while not self._done.is_set():
                if cancel.wait(0.05):
                    self._shutdown()
                    return

        threading.Thread(target=watch, daemon=True, name="commandcode-cancel-watch").start()

    def _shutdown(self) -> None:
        connection = self._connection
        sock = self._sock or (getattr(connection, "sock", None) if connection is not None else None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise TurnInterrupted("interrupted")

    def _network_error(self, error: BaseException, where: str) -> BaseException:
        if isinstance(error, (TimeoutError, socket.timeout)):
            return ProviderError(f"{self.label}: no answer from {where} within {self.timeout:g}s (timeout)")
        if isinstance(error, ConnectionRefusedError):
            return ProviderError(f"{self.label}: cannot connect to {where} (connection refused)",
                                 hint="is the server running? check baseURL in providers.json")
        if isinstance(error, socket.gaierror):
            return ProviderError(f"{self.label}: cannot resolve the host of {where}")
        if isinstance(error, (OSError, http.client.HTTPException)):
            reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
            return ProviderError(f"{self.label}: the connection to {where} failed ({reason})")
        return error

    def body_text(self) -> str:
        """The reply body (at most 64 KiB of it), decoded leniently."""
        assert self._response is not None
        try:
            return self._response.read(MAX_ERROR_BODY).decode("utf-8", errors="replace")
        except (OSError, http.client.HTTPException):
            self._check_cancel()
            return ""

    def events(self) -> Iterator[str]:
        """The `data` of each server-sent event, in order, until the stream ends (`[DONE]` is
        passed on like any other data). A read that times out or fails raises `ProviderError`;
        a set `cancel` raises `TurnInterrupted`."""
        assert self._response is not None
        data: list[str] = []
        where = self.url
        while True:
            self._check_cancel()
            try:
                raw = self._response.readline(1 << 20)
            except BaseException as error:
                self._check_cancel()
                raise self._network_error(error, where) from None
            self._check_cancel()
            if not raw:
                if data:
                    yield "\n".join(data)
                return
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if not line:
                if data:
                    yield "\n".join(data)
                    data = []
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            if field == "data":
                data.append(value[1:] if value.startswith(" ") else value)
