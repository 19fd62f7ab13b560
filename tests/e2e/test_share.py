"""Live shares through a real share server (`commandcode share serve`) and the CLI: publish and
revoke, the secret and Host checks, streams that end on revocation, expiry and deletion, a
reader that disconnects mid-stream, and the bad inputs (no server, port in use, wrong secret)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from helpers.cli import assert_error_lines, cli_env, run_cli, run_ok, wait_for
from helpers.share import http_get, share_server
from helpers.transcripts import GITHUB_TOKEN, TranscriptBuilder


def _session(home: Path, workdir: Path) -> tuple[TranscriptBuilder, Path]:
    builder = TranscriptBuilder(workdir)
    builder.user("shared prompt")
    builder.assistant(f"reply with a token {GITHUB_TOKEN}")
    return builder, builder.write(home)


def _share_file(transcript: Path) -> dict[str, str]:
    return json.loads(transcript.with_name(transcript.name[:-len(".jsonl")] + ".share.json").read_text())


def _path(url: str) -> str:
    return url.split("/", 3)[3].join(["/", ""])


def test_share_then_unshare(home: Path, workdir: Path) -> None:
    builder, transcript = _session(home, workdir)
    with share_server(home, workdir) as server:
        port = server["port"]
        completed = run_ok(["share", builder.session_id, "--yes"], workdir, home)
        url = completed.stdout.strip()
        info = _share_file(transcript)
        assert info["url"] == url and url.endswith("?secret=" + info["secret"]) and len(info["secret"]) >= 24
        assert "1 message" in completed.stderr or "2 message" in completed.stderr
        status, page = http_get(port, _path(url))
        assert status == 200 and b"shared prompt" in page and GITHUB_TOKEN.encode() not in page
        assert http_get(port, _path(url).replace(info["secret"], "wrong"))[0] == 403
        assert http_get(port, _path(url).split("?")[0])[0] == 403
        assert http_get(port, _path(url), host="evil.example:80")[0] == 421
        again = run_ok(["share", builder.session_id, "--yes"], workdir, home).stdout.strip()
        assert again == url, "sharing again keeps the link"
        run_ok(["unshare", builder.session_id], workdir, home)
        assert http_get(port, _path(url))[0] == 404
        assert not transcript.with_name(f"{builder.session_id}.share.json").exists()
        completed = run_cli(["unshare", builder.session_id], workdir, home)
        assert completed.returncode == 1 and "is not shared" in completed.stderr


def _stream_until(port: int, path: str, marker: bytes, action: object = None) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        received = b""
        while b"event: reset" not in received:
            received += connection.recv(65536)
        if callable(action):
            action()
        while marker not in received:
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
    return received


def test_streams_end_on_revocation_and_deletion_and_the_server_survives(home: Path, workdir: Path) -> None:
    builder, transcript = _session(home, workdir)
    with share_server(home, workdir) as server:
        port = server["port"]
        url = run_ok(["share", builder.session_id, "--yes"], workdir, home).stdout.strip()
        events = _path(url).replace("?", "/events?")
        # a reader that goes away mid-stream
        with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
            connection.sendall(f"GET {events} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            received = b""
            while b"event: reset" not in received:
                chunk = connection.recv(65536)
                assert chunk, received
                received += chunk
        received = _stream_until(port, events, b"event: end",
                                 lambda: run_ok(["unshare", builder.session_id], workdir, home))
        assert b"the share was revoked" in received
        url = run_ok(["share", builder.session_id, "--yes"], workdir, home).stdout.strip()
        received = _stream_until(port, _path(url).replace("?", "/events?"), b"event: end", transcript.unlink)
        assert b"the session was deleted" in received
        assert http_get(port, _path(url))[0] == 404
        other, _ = _session(home, workdir)
        assert http_get(port, _path(run_ok(["share", other.session_id, "--yes"], workdir, home).stdout.strip()))[0] == 200
        assert server["process"].poll() is None


def test_a_commit_is_streamed_as_an_append(home: Path, workdir: Path) -> None:
    builder, _transcript = _session(home, workdir)
    with share_server(home, workdir) as server:
        url = run_ok(["share", builder.session_id, "--yes"], workdir, home).stdout.strip()

        def commit() -> None:
            run_ok(["-p", "a new turn arrives", "-r", builder.session_id], workdir, home)

        received = _stream_until(server["port"], _path(url).replace("?", "/events?"), b"a new turn arrives", commit)
        assert b"event: append" in received


def test_expires_ends_the_share_by_itself(home: Path, workdir: Path) -> None:
    builder, _transcript = _session(home, workdir)
    with share_server(home, workdir) as server:
        url = run_ok(["share", builder.session_id, "--yes", "--expires", "1s"], workdir, home).stdout.strip()
        wait_for(lambda: http_get(server["port"], _path(url))[0] == 404, what="the share to expire")
    completed = run_cli(["share", builder.session_id, "--yes", "--expires", "soon"], workdir, home)
    assert completed.returncode == 2 and "is not a duration" in completed.stderr


def test_a_restarted_server_serves_its_shares_again(home: Path, workdir: Path) -> None:
    builder, _transcript = _session(home, workdir)
    with share_server(home, workdir):
        url = run_ok(["share", builder.session_id, "--yes"], workdir, home).stdout.strip()
    with share_server(home, workdir) as server:
        new_url = run_ok(["share", builder.session_id, "--yes"], workdir, home).stdout.strip()
        assert new_url.split("secret=")[1] == url.split("secret=")[1], "the same secret"
        assert http_get(server["port"], _path(new_url))[0] == 200


def test_bad_input(home: Path, workdir: Path) -> None:
    builder, transcript = _session(home, workdir)
    completed = run_cli(["share", builder.session_id, "--yes"], workdir, home)
    assert_error_lines(completed, error_contains="share server is not running")
    assert not transcript.with_name(f"{builder.session_id}.share.json").exists()
    with share_server(home, workdir) as server:
        completed = run_cli(["share", builder.session_id], workdir, home)
        assert completed.returncode == 2 and "--yes" in completed.stderr, "no terminal to ask on: refused"
        completed = run_cli(["share", "serve", "--port", str(server["port"])], workdir, home)
        assert_error_lines(completed, error_contains=f"port {server['port']} is in use")
        run_ok(["share", builder.session_id, "--yes"], workdir, home)
        share_file = transcript.with_name(f"{builder.session_id}.share.json")
        info = json.loads(share_file.read_text())
        share_file.write_text(json.dumps({**info, "secret": "not-the-secret"}))
        completed = run_cli(["unshare", builder.session_id], workdir, home)
        assert completed.returncode == 1 and "secret does not match" in completed.stderr
        assert share_file.exists()
        assert http_get(server["port"], _path(info["url"]))[0] == 200, "the share was not revoked"
        server["process"].terminate()
        server["process"].wait(timeout=30)
    completed = run_cli(["unshare", builder.session_id], workdir, home)
    assert completed.returncode == 1 and "not running" in completed.stderr


def test_serving_another_address_needs_host_and_checks_it(home: Path, workdir: Path) -> None:
    probe = subprocess.run([sys.executable, "-c", "import socket; s=socket.socket(); s.bind(('127.0.0.2', 0))"],
                           capture_output=True, env=cli_env(home), check=False)
    address = "127.0.0.2" if probe.returncode == 0 else "127.0.0.1"
    builder, _transcript = _session(home, workdir)
    with share_server(home, workdir, "--host", address) as server:
        url = run_ok(["share", builder.session_id, "--yes"], workdir, home).stdout.strip()
        assert url.startswith(f"http://{address}:{server['port']}/s/")
