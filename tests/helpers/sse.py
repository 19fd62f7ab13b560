"""A plain HTTP viewer of a share service's event stream, for the tests and the benchmark: a
thread that follows `/s/<id>/events` on one replica, and on any hang-up (a replica killed, a
refusal) reconnects to the next one with `Last-Event-ID`, recording every event's seq, html and
arrival time, until it holds the seq it was told to wait for. It reads the stream as any HTTP/1.1
client does: chunked (the service's) or delimited by the connection's end.

A reconnect to a replica that is gone can meet TCP's self-connect: when the port the kernel picks
for the client is the dead server's port, the socket connects to itself and reads back its own
request (`GET ... HTTP/1.1` where a status line was expected). Such a connection counts as refused.
An answer that is not HTTP, or any other error, stops the viewer with that error in `error`
(never an exception leaking from the thread): `stop_all()`, which the suite's autouse fixture
calls after every test, stops the viewers the test started and returns their errors, naming the
test, so that test fails instead of a warning printed under a later one."""

from __future__ import annotations

import json
import os
import socket
import threading
import time

_started: list[Viewer] = []
_started_lock = threading.Lock()


class ProtocolError(Exception):
    """The server's answer is not the HTTP event stream the viewer reads."""


class Viewer(threading.Thread):
    def __init__(self, ports: list[int], path: str, first: int = 0, *, source: str = "127.0.0.1") -> None:
        super().__init__(daemon=True)
        self.ports, self.path, self.index, self.source = list(ports), path, first, source
        self.seqs: list[int] = []
        self.kinds: list[str] = []
        self.html: list[str] = []
        self.arrived: dict[int, float] = {}
        self.statuses: list[int] = []
        self.connects = 0
        self.target: int | None = None
        self.stopping = threading.Event()
        self.connected = threading.Event()
        self.error: BaseException | None = None
        self.owner = os.environ.get("PYTEST_CURRENT_TEST", "").removesuffix(" (call)").removesuffix(" (setup)")
        with _started_lock:
            _started.append(self)

    def finished(self) -> bool:
        return self.stopping.is_set() or (self.target is not None and bool(self.seqs) and self.seqs[-1] >= self.target)

    def run(self) -> None:
        try:
            while not self.finished():
                port = self.ports[self.index % len(self.ports)]
                try:
                    self._follow(port)
                except OSError:
                    pass
                if not self.finished():
                    self.index += 1
                    time.sleep(0.05)
        except BaseException as error:  # kept for the test that owns the viewer (`stop_all`)
            self.error = error
            self.stopping.set()

    def _follow(self, port: int) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(self.source, 0)) as connection:
            if self_connected(connection):
                return  # nobody listens on `port` (see the module docstring)
            self.connects += 1
            resume = f"Last-Event-ID: {self.seqs[-1]}\r\n" if self.seqs else ""
            connection.sendall(f"GET {self.path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{resume}\r\n".encode())
            connection.settimeout(0.5)
            buffer = raw = b""
            head, chunked = True, False
            while not self.finished():
                try:
                    chunk = connection.recv(65536)
                except TimeoutError:
                    continue
                if not chunk:
                    return
                raw += chunk
                if head:
                    if b"\r\n\r\n" not in raw:
                        continue
                    top, raw = raw.split(b"\r\n\r\n", 1)
                    status = status_code(top, port)
                    self.statuses.append(status)
                    if status != 200:
                        return
                    head = False
                    chunked = b"transfer-encoding: chunked" in top.lower()
                    self.connected.set()
                if chunked:
                    data, raw, ended = dechunk(raw)
                    buffer += data
                else:
                    buffer, raw, ended = buffer + raw, b"", False
                while b"\n\n" in buffer:
                    event, buffer = buffer.split(b"\n\n", 1)
                    self._event(event.decode())
                if ended:
                    return

    def _event(self, text: str) -> None:
        fields: dict[str, str] = {}
        for line in text.split("\n"):
            name, _, value = line.partition(": ")
            fields[name] = value
        if "id" not in fields:
            if fields.get("event") == "end":
                self.stopping.set()
            return
        seq = int(fields["id"])
        self.arrived.setdefault(seq, time.monotonic())
        self.seqs.append(seq)
        self.kinds.append(fields.get("event", ""))
        self.html.append(json.loads(fields["data"])["html"])


def self_connected(connection: socket.socket) -> bool:
    """Whether `connection` is connected to itself (TCP simultaneous open with its own port)."""
    try:
        return bool(connection.getsockname() == connection.getpeername())
    except OSError:
        return False


def status_code(head: bytes, port: int) -> int:
    """The status code of a response's head.

    Raises:
        ProtocolError: its first line is not an HTTP/1.x status line.
    """
    line = head.split(b"\r\n", 1)[0]
    version, _, rest = line.partition(b" ")
    code = rest[:3]
    if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit() or rest[3:4] not in (b"", b" "):
        raise ProtocolError(f"port {port} answered {line[:80]!r} where an HTTP status line was expected")
    return int(code)


def stop_all(timeout: float = 5) -> list[str]:
    """Stops every viewer started since the last call, waits for each, and returns the errors
    they met, each naming the test that started it."""
    with _started_lock:
        viewers = _started[:]
        _started.clear()
    for viewer in viewers:
        viewer.stopping.set()
    errors = []
    for viewer in viewers:
        if viewer.ident is not None:  # started
            viewer.join(timeout)
        if viewer.is_alive():
            errors.append(f"a viewer of {viewer.path} started by {viewer.owner or 'an unknown test'} did not stop")
        elif viewer.error is not None:
            errors.append(f"a viewer of {viewer.path} started by {viewer.owner or 'an unknown test'} failed: "
                          f"{type(viewer.error).__name__}: {viewer.error}")
    return errors


def dechunk(raw: bytes) -> tuple[bytes, bytes, bool]:
    """The data of the complete chunks at the start of `raw`, what is left of it, and whether the
    last chunk (size 0) was among them."""
    data = b""
    while b"\r\n" in raw:
        size_line, rest = raw.split(b"\r\n", 1)
        size = int(size_line.split(b";", 1)[0], 16)
        if len(rest) < size + 2:
            break
        data += rest[:size]
        raw = rest[size + 2:]
        if size == 0:
            return data, raw, True
    return data, raw, False
