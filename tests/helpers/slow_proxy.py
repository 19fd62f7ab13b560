"""A slow share service for the tests and the benchmark: an HTTP proxy on 127.0.0.1 that waits
`delay` seconds before forwarding each request to the real service (the issue's "slow, 1 s per
request"), then answers with what the service answered."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class SlowProxy(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, target: str, delay: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.target, self.delay = target, delay
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.requests: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    server: SlowProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        del format, args

    def _forward(self) -> None:
        self.server.requests.append(f"{self.command} {self.path}")
        time.sleep(self.server.delay)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        request = urllib.request.Request(self.server.target + self.path, data=body, method=self.command,
                                         headers={key: value for key, value in self.headers.items()
                                                  if key.lower() in ("authorization", "content-type")})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, data = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, data = error.code, error.read()
        except OSError:  # the service stopped meanwhile (a test's end)
            status, data = 502, b'{"error": "the service behind the proxy does not answer"}'
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the publisher gave up waiting (a process that exited)

    do_GET = do_POST = _forward


@contextmanager
def slow_proxy(target: str, delay: float = 1.0) -> Iterator[SlowProxy]:
    proxy = SlowProxy(target, delay)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
