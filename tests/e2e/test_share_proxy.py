"""The team service behind a load balancer (`share serve --store URL --trusted-proxy ADDR`): a
real replica on 127.0.0.1, the "proxy" connecting from 127.0.0.2 and an untrusted client from
127.0.0.3. Through a trusted proxy each client named by `X-Forwarded-For` has its own
connection limit and the proxy's own connections are not capped; from anyone else
`X-Forwarded-For` is never read."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from commandcode.share.service.clients import Clients, parse_networks
from helpers.cli import assert_error_lines, run_cli, wait_for
from helpers.postgres import Replica, token

PROXY, OTHER = "127.0.0.2", "127.0.0.3"


def _request(port: int, source: str, path: str, forwarded: str | None = None) -> tuple[socket.socket, bytes]:
    """Sends one request from `source`; the open connection and its first bytes (the status line on)."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    head = [f"GET {path} HTTP/1.1", "Host: x"] + ([f"X-Forwarded-For: {forwarded}"] if forwarded is not None else [])
    connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
    return connection, connection.recv(4096)


@contextmanager
def _streams() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    try:
        yield opened
    finally:
        for connection in opened:
            connection.close()


def test_a_trusted_proxy_counts_each_client_it_forwards(home: Path, workdir: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'shares.db'}"
    alice = token(store, home, workdir, "alice")
    replica = Replica(store, home, workdir, "--max-per-client", "3", "--trusted-proxy", PROXY,
                      "--trusted-proxy", "10.9.0.0/16")
    try:
        connection = http.client.HTTPConnection("127.0.0.1", replica.port, timeout=30)
        connection.request("POST", "/api/shares", body=json.dumps({"sessionId": "s1", "title": "t"}),
                           headers={"Authorization": f"Bearer {alice}"})
        share = json.loads(connection.getresponse().read())
        connection.close()
        events = f"/s/{share['shareId']}/events?secret={share['secret']}"

        def stream(source: str, forwarded: str | None) -> tuple[socket.socket, bytes]:
            connection, head = _request(replica.port, source, events, forwarded)
            opened.append(connection)
            return connection, head

        with _streams() as opened:
            # through the proxy: 3 streams for 10.0.0.1, a 4th refused; other clients are served
            for _ in range(3):
                assert stream(PROXY, "10.0.0.1")[1].startswith(b"HTTP/1.1 200")
            assert stream(PROXY, "10.0.0.1")[1].startswith(b"HTTP/1.1 429")
            # the proxies' own hops are skipped (read from the right); a spoofed left part is not believed
            assert stream(PROXY, "10.0.0.1, 10.9.4.4")[1].startswith(b"HTTP/1.1 429")
            for _ in range(3):
                assert stream(PROXY, "10.0.0.1, 10.0.0.2")[1].startswith(b"HTTP/1.1 200")
            assert stream(PROXY, "10.0.0.2")[1].startswith(b"HTTP/1.1 429")
            # the proxy's own connections (7 open, and more) are not capped
            assert stream(PROXY, "10.0.0.3")[1].startswith(b"HTTP/1.1 200")
            connection, head = _request(replica.port, PROXY, "/healthz")
            connection.close()
            assert head.startswith(b"HTTP/1.1 200")
            # an untrusted peer's X-Forwarded-For is never read: its own address is the client
            for number in range(3):
                assert stream(OTHER, f"10.0.1.{number}")[1].startswith(b"HTTP/1.1 200")
            assert stream(OTHER, "10.0.1.99")[1].startswith(b"HTTP/1.1 429")
            # a client's streams ending frees its places (noticed at the next row they are sent)
            for connection in opened[:3]:
                connection.close()
            publish = http.client.HTTPConnection("127.0.0.1", replica.port, timeout=30)
            publish.request("POST", f"/api/shares/{share['shareId']}/rows", headers={"Authorization": f"Bearer {alice}"},
                            body=json.dumps({"rows": [{"seq": 1, "kind": "row", "html": "<p>1</p>", "messages": 1}]}))
            assert publish.getresponse().status == 200
            publish.close()

            def served_again() -> bool:
                connection, head = _request(replica.port, PROXY, "/healthz", "10.0.0.1")
                connection.close()
                return head.startswith(b"HTTP/1.1 200")

            wait_for(served_again, what="10.0.0.1 served again")
        assert "Traceback" not in replica.stop()
    finally:
        replica.stop()


def test_without_the_option_x_forwarded_for_is_never_read(home: Path, workdir: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'shares.db'}"
    replica = Replica(store, home, workdir, "--max-per-client", "2")
    try:
        with _streams() as opened:
            for forwarded in ("10.0.0.1", "10.0.0.2"):
                connection, head = _request(replica.port, PROXY, "/s/none/events?secret=x", forwarded)
                opened.append(connection)
                assert head.startswith(b"HTTP/1.1 404")  # answered, and the connection stays open
            connection, head = _request(replica.port, PROXY, "/healthz", "10.0.0.3")
            opened.append(connection)
            assert head.startswith(b"HTTP/1.1 429")
    finally:
        replica.stop()


def test_bad_trusted_proxies_are_one_line(home: Path, workdir: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'shares.db'}"
    completed = run_cli(["share", "serve", "--store", store, "--trusted-proxy", "the-balancer"], workdir, home)
    assert_error_lines(completed, error_contains="--trusted-proxy 'the-balancer' is not an IP address or network",
                       exit_code=2)
    assert not (tmp_path / "shares.db").exists(), "nothing was opened"
    completed = run_cli(["share", "serve", "--trusted-proxy", "10.0.0.5"], workdir, home)
    assert completed.returncode == 2 and "--trusted-proxy is for the team service" in completed.stderr


def test_the_client_behind_trusted_proxies() -> None:
    clients = Clients(1, parse_networks(["10.0.0.0/8", "::1"]))
    assert clients.client_of("192.0.2.1", ["198.51.100.7"]) == "192.0.2.1", "an untrusted peer's header is ignored"
    assert clients.client_of("10.0.0.5", ["198.51.100.7"]) == "198.51.100.7"
    assert clients.client_of("10.0.0.5", ["203.0.113.9, 198.51.100.7, 10.1.1.1"]) == "198.51.100.7"
    assert clients.client_of("10.0.0.5", ["203.0.113.9", "198.51.100.7:4431"]) == "198.51.100.7"
    assert clients.client_of("10.0.0.5", ["[2001:db8::7]:443"]) == "2001:db8::7"
    assert clients.client_of("10.0.0.5", ["10.2.2.2, 10.3.3.3"]) == "10.2.2.2", "all trusted: the leftmost"
    assert clients.client_of("10.0.0.5", ["garbage, 10.3.3.3"]) == "10.3.3.3", "malformed: the last good hop"
    assert clients.client_of("10.0.0.5", []) == "10.0.0.5"
    assert clients.client_of("::ffff:10.0.0.5", ["198.51.100.7"]) == "198.51.100.7"
    assert clients.client_of("::1", ["198.51.100.7"]) == "198.51.100.7"
    assert clients.take("198.51.100.7") and not clients.take("198.51.100.7")
    clients.release("198.51.100.7")
    assert clients.take("198.51.100.7")
