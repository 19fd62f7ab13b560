"""A plain HTTP viewer of a share service's event stream, for the tests and the benchmark: a
thread that follows `/s/<id>/events` on one replica, and on any hang-up (a replica killed, a
refusal) reconnects to the next one with `Last-Event-ID`, recording every event's seq, html and
arrival time, until it holds the seq it was told to wait for. It reads the stream as any HTTP/1.1
client does: chunked (the service's) or delimited by the connection's end."""

from __future__ import annotations

import json
import socket
import threading
import time


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

    def finished(self) -> bool:
        return self.stopping.is_set() or (self.target is not None and bool(self.seqs) and self.seqs[-1] >= self.target)

    def run(self) -> None:
        while not self.finished():
            port = self.ports[self.index % len(self.ports)]
            try:
                self._follow(port)
            except OSError:
                pass
            if not self.finished():
                self.index += 1
                time.sleep(0.05)

    def _follow(self, port: int) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(self.source, 0)) as connection:
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
                    status = int(top.split(b" ", 2)[1])
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
