"""The share tests' event-stream viewer (`tests/helpers/sse.py`) cannot misread and cannot fail
unseen. In a landing run a viewer left running after its test reconnected to a dead replica's
port until TCP connected it to itself: it read back its own request line where a status line was
expected, and the thread's `ValueError` surfaced as a warning under an unrelated later test."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.sse import ProtocolError, Viewer, self_connected, status_code, stop_all

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture
def echo_port() -> Iterator[int]:
    """A server on 127.0.0.1 that answers each request with the request itself (what a
    self-connected socket reads)."""
    server = socket.create_server(("127.0.0.1", 0))
    stopping = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stopping.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                request = b""
                while b"\r\n\r\n" not in request:
                    chunk = connection.recv(4096)
                    if not chunk:
                        break
                    request += chunk
                connection.sendall(request)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stopping.set()
    thread.join(5)
    server.close()


def test_a_socket_connected_to_itself_is_told_apart_from_a_server() -> None:
    with socket.socket() as lonely:
        lonely.bind(("127.0.0.1", 0))
        lonely.connect(lonely.getsockname())  # TCP simultaneous open with itself: nobody listens there
        assert self_connected(lonely)
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()) as client:
        assert not self_connected(client)


def test_only_an_http_status_line_gives_a_status() -> None:
    assert status_code(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream", 1) == 200
    assert status_code(b"HTTP/1.0 404", 1) == 404
    for head in (b"GET /s/x/events HTTP/1.1\r\nHost: 127.0.0.1:1", b"", b"HTTP/1.1 20", b"HTTP/1.1 2000 OK", b"SSH-2.0"):
        with pytest.raises(ProtocolError, match="where an HTTP status line was expected"):
            status_code(head, 1)


def test_a_viewer_that_reads_its_own_request_stops_with_an_error_naming_its_test(echo_port: int) -> None:
    viewer = Viewer([echo_port], "/s/abc/events")
    viewer.start()
    viewer.join(30)
    assert not viewer.is_alive()
    assert isinstance(viewer.error, ProtocolError)
    assert "GET /s/abc/events HTTP/1.1" in str(viewer.error)
    errors = stop_all()  # what the suite's autouse fixture calls after each test
    assert len(errors) == 1
    assert os.environ["PYTEST_CURRENT_TEST"].split(" ")[0] in errors[0] and "ProtocolError" in errors[0], errors


def test_the_suite_fails_the_test_whose_viewer_failed(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["helpers.fixtures"]\n')
    (tmp_path / "test_inner.py").write_text(
        "import socket\n"
        "from helpers.sse import Viewer\n"
        "def test_owner():\n"
        "    server = socket.create_server(('127.0.0.1', 0))\n"
        "    viewer = Viewer([server.getsockname()[1]], '/s/x/events')\n"
        "    viewer.start()\n"
        "    connection, _ = server.accept()\n"
        "    connection.recv(4096)\n"
        "    connection.sendall(b'GET /elsewhere HTTP/1.1\\r\\n\\r\\n')\n"
        "    viewer.join(30)\n"
        "def test_bystander():\n"
        "    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "-W", "error::pytest.PytestUnhandledThreadExceptionWarning", str(tmp_path)],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(TESTS)}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed, 1 error" in done.stdout, done.stdout  # test_owner passed, then failed at teardown
    assert "ERROR test_inner.py::test_owner" in done.stdout, done.stdout
    assert "started by test_inner.py::test_owner failed: ProtocolError" in done.stdout, done.stdout
