"""What both share servers' HTTP answers share (the one-machine `server.py` and the team
service's ASGI `service/app.py`): the same safety headers, no access log, and a failed request
reported as one line, never a traceback."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler
from typing import Any

# On every answer of both servers (besides Content-Type and Content-Length).
SAFETY_HEADERS = (("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
                  ("Referrer-Policy", "no-referrer"))


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        del format, args  # no access log on the terminal

    def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in SAFETY_HEADERS:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _start_events(self) -> None:
        """The head of a server-sent event stream (it ends when the connection does)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Accel-Buffering", "no")
        self.end_headers()
        self.close_connection = True

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")


def report_failed_request(server_name: str, client_address: Any, error: BaseException | None = None) -> None:
    """For `handle_error` (the error being handled, or `error`): a client that hung up early (a
    closed tab, a `curl` stopped half-way) is no error at all and prints nothing; anything else is
    one line on stderr."""
    error = error if error is not None else sys.exc_info()[1]
    if isinstance(error, (ConnectionError, TimeoutError)):
        return
    host = client_address[0] if isinstance(client_address, tuple) and client_address else "?"
    detail = " ".join(str(error).split()) or type(error).__name__
    print(f"{server_name}: a request from {host} failed: {detail}", file=sys.stderr, flush=True)
