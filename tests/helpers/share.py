"""A real share server for the share tests: `commandcode share serve --port 0` as a subprocess
of the test's data dir, found through the `server.json` it writes, stopped by its pid."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helpers.cli import cli_env, wait_for


def _server_info(data: Path, process: subprocess.Popen[str]) -> dict[str, Any] | None:
    path = data / "share" / "server.json"
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return info if info.get("pid") == process.pid else None


@contextmanager
def share_server(data: Path, cwd: Path, *args: str) -> Iterator[dict[str, Any]]:
    """Runs the share server; yields its `server.json` (host, port, url, token, pid)."""
    process = subprocess.Popen([sys.executable, "-m", "commandcode", "share", "serve", "--port", "0", *args], cwd=cwd,
                               env=cli_env(data), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL)
    try:
        wait_for(lambda: _server_info(data, process) is not None or process.poll() is not None, what="the share server")
        info = _server_info(data, process)
        assert info is not None, process.communicate(timeout=30)
        info["process"] = process
        yield info
    finally:
        if process.poll() is None:
            process.terminate()
        process.communicate(timeout=30)


def http_get(port: int, path: str, *, host: str | None = None, read_all: bool = True) -> tuple[int, bytes]:
    """A raw HTTP/1.1 GET to 127.0.0.1:`port` (any `Host` header); the status and the body read."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\nConnection: close\r\n\r\n".encode())
        chunks = []
        while read_all and (chunk := connection.recv(65536)):
            chunks.append(chunk)
        if not read_all:
            chunks.append(connection.recv(65536))
    response = b"".join(chunks)
    status = int(response.split(b" ", 2)[1])
    return status, response.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in response else b""
