"""Clients that hang up early print nothing on the share server's terminal (issue 26 §5): 60 real
clients on 127.0.0.1 reset their connection at every point of a request (before sending it,
half-way through its headers, right after it, while the page is written, on the event stream);
the server's stderr then holds no traceback and no line at all, and it still serves the page."""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path

from helpers.cli import run_ok
from helpers.share import http_get, share_server
from helpers.transcripts import TranscriptBuilder

CLIENTS = 60


def _hang_up(port: int, request: bytes, *, wait_for_bytes: bool) -> None:
    connection = socket.create_connection(("127.0.0.1", port), timeout=30)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = reset
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    if request:
        connection.sendall(request)
    if wait_for_bytes:
        connection.recv(16)  # the server has started writing
    connection.close()


def test_sixty_early_hang_ups_print_nothing(home: Path, workdir: Path) -> None:
    builder = TranscriptBuilder(workdir)
    builder.user("shared prompt")
    builder.assistant("a long reply line\n" * 4_000)  # a page bigger than the socket buffers
    builder.write(home)
    with share_server(home, workdir) as server:
        port = server["port"]
        url = run_ok(["share", builder.session_id, "--yes"], workdir, home).stdout.strip()
        path = url.split("/", 3)[3].join(["/", ""])
        full = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
        events = f"GET {path.replace('?', '/events?')} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
        cases = [(b"", False), (full[:20], False), (full, False), (full, True), (events, True)]
        for number in range(CLIENTS):
            request, wait = cases[number % len(cases)]
            _hang_up(port, request, wait_for_bytes=wait)
        time.sleep(1.0)  # the handler threads finish writing into the reset connections
        status, page = http_get(port, path)
        assert status == 200 and b"shared prompt" in page
        process = server["process"]
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert "Traceback" not in stderr, stderr[-3000:]
    assert "Error" not in stderr and "reset" not in stderr.lower(), stderr[-3000:]
