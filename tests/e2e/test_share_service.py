"""The team share service (`commandcode share serve --store postgresql://…`) against a real
PostgreSQL cluster and real replicas on 127.0.0.1: publishing and viewing across replicas, the
publisher's settings, outbox and CLI, and the bad inputs (tokens, secrets, bodies, a replayed
outbox, a database that is down, read-only or failing mid-transaction, a viewer that never reads,
1,000 connections from one address, a session with corrupt lines), and a replica stopped with a
stream open."""

from __future__ import annotations

import http.client
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_cli, run_ok, wait_for
from helpers.postgres import Cluster, Replica, replicas, token
from helpers.sse import Viewer
from helpers.transcripts import GITHUB_TOKEN, TranscriptBuilder


def call(url: str, path: str, body: Any = None, *, auth: str | None = None, raw: bytes | None = None,
         source: str = "127.0.0.1") -> tuple[int, Any]:
    """One request to a replica (from `source`, a loopback address); the status and the JSON (or text) answer."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    port = int(url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    try:
        connection.request("GET" if data is None else "POST", path, body=data,
                           headers={"Authorization": f"Bearer {auth}"} if auth else {})
        response = connection.getresponse()
        status, text = response.status, response.read()
    finally:
        connection.close()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text.decode()


def rows(first: int, count: int, tag: str = "r") -> dict[str, Any]:
    return {"rows": [{"seq": seq, "kind": "row", "html": f"<p>{tag}{seq}</p>", "messages": seq}
                     for seq in range(first, first + count)]}


def open_share(url: str, user_token: str, session_id: str = "s1", **extra: Any) -> tuple[str, str]:
    status, answer = call(url, "/api/shares", {"sessionId": session_id, "title": "a title", **extra}, auth=user_token)
    assert status == 200, answer
    return answer["shareId"], answer["secret"]


def test_publish_view_resume_revoke_across_replicas(postgres: Cluster, home: Path, workdir: Path) -> None:
    alice, bob = token(postgres.url, home, workdir, "alice"), token(postgres.url, home, workdir, "bob")
    with replicas(postgres.url, home, workdir, 2) as (one, two):
        share_id, secret = open_share(one.url, alice)
        events = f"/s/{share_id}/events?secret={secret}"
        viewer = Viewer([two.port], events)
        viewer.start()
        viewer.connected.wait(30)
        assert call(one.url, f"/api/shares/{share_id}/rows", rows(1, 3), auth=alice) == (200, {"stored": 3, "last": 3})
        # the same rows again (a replayed outbox): nothing is stored or sent twice
        assert call(one.url, f"/api/shares/{share_id}/rows", rows(1, 3), auth=alice) == (200, {"stored": 0, "last": 3})
        assert call(one.url, f"/api/shares/{share_id}/rows", rows(2, 3), auth=alice) == (200, {"stored": 1, "last": 4})
        viewer.target = 4
        wait_for(viewer.finished, what="the rows on the other replica")
        assert viewer.seqs == [1, 2, 3, 4] and viewer.html[0] == "<p>r1</p>"
        # a viewer resuming on another replica gets only what follows its Last-Event-ID
        later = Viewer([one.port], events)
        later.seqs.append(2)
        later.target = 4
        later.start()
        wait_for(later.finished, what="the resumed stream")
        assert later.seqs == [2, 3, 4]
        status, page = call(two.url, f"/s/{share_id}?secret={secret}")
        assert status == 200 and "<p>r4</p>" in page and 'data-seq="4"' in page and "Content-Security-Policy" in page
        # wrong secrets, tokens and owners
        assert call(two.url, f"/s/{share_id}?secret=wrong")[0] == 403
        assert call(two.url, f"/s/{share_id}/events")[0] == 403
        assert call(two.url, "/s/nosuchshare?secret=x")[0] == 404
        assert call(one.url, f"/api/shares/{share_id}/rows", rows(5, 1), auth="ccs_wrong") == (
            401, {"error": "wrong or missing publisher token"})
        assert call(one.url, f"/api/shares/{share_id}/rows", rows(5, 1))[0] == 401
        assert call(one.url, f"/api/shares/{share_id}/rows", rows(5, 1), auth=bob) == (
            403, {"error": "this share belongs to another user"})
        assert call(one.url, f"/api/shares/{share_id}/revoke", {}, auth=bob)[0] == 403
        # a gap, or other content at a stored seq, is refused
        assert call(one.url, f"/api/shares/{share_id}/rows", rows(7, 1), auth=alice)[0] == 409
        assert call(one.url, f"/api/shares/{share_id}/rows", rows(4, 1, "other"), auth=alice) == (
            409, {"error": "row 4 is already stored with other content"})
        # revocation on one replica ends the streams and pages on the other at once
        watcher = Viewer([two.port], events)
        watcher.start()
        wait_for(lambda: len(watcher.seqs) == 4, what="the watcher")
        assert call(one.url, f"/api/shares/{share_id}/revoke", {}, auth=alice) == (200, {"revoked": True})
        status, text = call(two.url, f"/s/{share_id}?secret={secret}")
        assert (status, text) == (410, "this share has ended: the share was revoked\n")
        wait_for(watcher.stopping.is_set, what="the end event")
        assert watcher.connects == 1
        assert call(one.url, f"/api/shares/{share_id}/rows", rows(5, 1), auth=alice) == (
            410, {"error": "the share was revoked"})
        # an expired share is gone everywhere too; it is seen before its expiry first, which a loaded
        # machine can let pass before the first look has its answer: then a share for longer
        for seconds in (1.5, 3, 6, 12, 24, 48):
            expires_ms = int(time.time() * 1000 + seconds * 1000)
            expiring, expiring_secret = open_share(one.url, alice, f"s2-{seconds}", expiresAt=expires_ms)
            seen = call(two.url, f"/s/{expiring}?secret={expiring_secret}")[0]
            if time.time() * 1000 < expires_ms:
                break
        assert seen == 200
        wait_for(lambda: time.time() * 1000 > expires_ms, timeout=120, what="the share's expiry")
        assert call(two.url, f"/s/{expiring}?secret={expiring_secret}")[0] == 410
        assert call(one.url, f"/api/shares/{expiring}/rows", rows(1, 1), auth=alice)[0] == 410
        # a new token for alice revokes her old one, on every replica
        renewed = token(postgres.url, home, workdir, "alice")
        assert call(two.url, "/api/whoami", auth=alice) == (401, {"error": "wrong or missing publisher token"})
        assert call(two.url, "/api/whoami", auth=renewed) == (200, {"user": "alice"})


def test_bodies_and_connections(postgres: Cluster, home: Path, workdir: Path) -> None:
    alice = token(postgres.url, home, workdir, "alice")
    with replicas(postgres.url, home, workdir, 1, "--max-body", "65536", "--max-per-client", "40") as (one,):
        share_id, secret = open_share(one.url, alice)
        path = f"/api/shares/{share_id}/rows"
        assert call(one.url, path, raw=json.dumps(rows(1, 3000)).encode(), auth=alice) == (
            413, {"error": "the body is over the service's limit of 65536 bytes"})
        assert call(one.url, path, raw=b"{not json", auth=alice) == (400, {"error": "the body is not JSON"})
        assert call(one.url, path, raw=b"[1, 2]", auth=alice)[0] == 400
        assert call(one.url, path, {"rows": [{"seq": "1", "kind": "row", "html": "x"}]}, auth=alice)[0] == 400
        assert call(one.url, path, {"rows": [{"seq": 1, "kind": "script", "html": "x"}]}, auth=alice)[0] == 400
        assert call(one.url, "/api/shares", {"title": 3}, auth=alice)[0] == 400
        with socket.create_connection(("127.0.0.1", one.port), timeout=30) as raw:
            raw.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {alice}\r\n\r\n".encode())
            assert raw.recv(100).startswith(b"HTTP/1.1 411")
        # a viewer that never reads, and 1,000 connections from one address: everyone else is served
        stuck = socket.create_connection(("127.0.0.1", one.port), timeout=30)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.sendall(f"GET /s/{share_id}/events?secret={secret} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        flood = [socket.create_connection(("127.0.0.1", one.port), timeout=30) for _ in range(1000)]
        refused = 0
        for connection in flood:
            connection.settimeout(0.2)
            try:
                refused += connection.recv(64).startswith(b"HTTP/1.1 429")
            except TimeoutError:
                pass
        assert refused >= 1000 - 40
        assert call(one.url, "/healthz")[0] == 429, "one address's connections are capped"
        other = Viewer([one.port], f"/s/{share_id}/events?secret={secret}", source="127.0.0.2")
        other.start()
        assert other.connected.wait(30)
        big = "x" * 60_000
        for seq in range(1, 41):  # 2.4 MB: far more than the stuck viewer's buffers hold
            assert call(one.url, path, {"rows": [{"seq": seq, "kind": "row", "html": big, "messages": 1}]},
                        auth=alice, source="127.0.0.2") == (200, {"stored": 1, "last": seq})
        other.target = 40
        wait_for(other.finished, what="the other address's viewer")
        assert other.seqs == list(range(1, 41))
        for connection in flood:
            connection.close()
        stuck.close()
        wait_for(lambda: call(one.url, "/healthz")[0] == 200, what="the address served again")


def test_the_database_down_read_only_and_failing_mid_transaction(postgres: Cluster, home: Path, workdir: Path) -> None:
    alice = token(postgres.url, home, workdir, "alice")
    with replicas(postgres.url, home, workdir, 1) as (one,):
        share_id, secret = open_share(one.url, alice)
        path = f"/api/shares/{share_id}/rows"
        viewer = Viewer([one.port], f"/s/{share_id}/events?secret={secret}")
        viewer.start()
        assert viewer.connected.wait(30)
        assert call(one.url, path, rows(1, 2), auth=alice)[0] == 200
        postgres.stop()
        try:
            status, answer = call(one.url, path, rows(3, 2), auth=alice)
            assert status == 503 and answer["error"].startswith("the share store is unavailable:")
            assert "\n" not in answer["error"]
            assert call(one.url, "/healthz") == (200, {"ok": True})
            # a viewer already following keeps its stream; the page of a share it holds still shows
            assert call(one.url, f"/s/{share_id}?secret={secret}")[0] == 200
        finally:
            postgres.start()
        assert call(one.url, path, rows(3, 2), auth=alice) == (200, {"stored": 2, "last": 4})
        postgres.sql("ALTER SYSTEM SET default_transaction_read_only = on")
        postgres.sql("SELECT pg_reload_conf()")
        try:
            wait_for(lambda: call(one.url, path, rows(5, 1), auth=alice)[0] == 503, what="read-only")
            status, answer = call(one.url, path, rows(5, 1), auth=alice)
            assert answer == {"error": "the share store is read-only; nothing was stored"}
        finally:
            postgres.sql("ALTER SYSTEM RESET default_transaction_read_only")
            postgres.sql("SELECT pg_reload_conf()")
        wait_for(lambda: call(one.url, path, rows(5, 1), auth=alice)[0] == 200, what="writable again")
        postgres.sql("CREATE FUNCTION fail_row() RETURNS trigger AS $$ BEGIN IF NEW.seq = 7 THEN "
                     "RAISE EXCEPTION 'refused row 7'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql")
        postgres.sql("CREATE TRIGGER fail_row BEFORE INSERT ON share_rows FOR EACH ROW EXECUTE FUNCTION fail_row()")
        try:
            status, answer = call(one.url, path, rows(6, 3), auth=alice)
            assert status == 503 and "refused row 7" in answer["error"] and "nothing was kept" in answer["error"]
        finally:
            postgres.sql("DROP TRIGGER fail_row ON share_rows")
        assert call(one.url, path, rows(6, 3), auth=alice) == (200, {"stored": 3, "last": 8})
        viewer.target = 8
        wait_for(viewer.finished, what="every row")
        assert viewer.seqs == list(range(1, 9)), "nothing lost or repeated through the failures"


def _settings(home: Path, server: str, token_ref: str = "$CC_SHARE_TOKEN") -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"share": {"server": server, "token": token_ref}}))


def test_a_command_token_runs_once_per_share(home: Path, workdir: Path, tmp_path: Path) -> None:
    """`commandcode share` checks the service, then publishes: one `!command` run gives the token
    for both (it ran once for each before)."""
    store = f"sqlite:///{tmp_path / 'shares.db'}"
    alice = token(store, home, workdir, "alice")
    builder = TranscriptBuilder(workdir)
    builder.user("shared prompt")
    builder.assistant("a reply")
    builder.write(home)
    runs = tmp_path / "token-runs"
    with replicas(store, home, workdir, 1) as (one,):
        _settings(home, one.url, f"!echo run >> {runs}; echo {alice}")
        url = run_ok(["share", builder.session_id, "--yes", "--no-copy"], workdir, home).stdout.strip()
        assert url.startswith(one.url + "/s/")
        assert runs.read_text().splitlines() == ["run"]


def test_the_cli_publishes_to_the_service(postgres: Cluster, home: Path, workdir: Path) -> None:
    alice = token(postgres.url, home, workdir, "alice")
    builder = TranscriptBuilder(workdir)
    builder.user("shared prompt")
    builder.assistant(f"reply with a token {GITHUB_TOKEN}")
    transcript = builder.write(home, extra="{corrupt line\n")
    with replicas(postgres.url, home, workdir, 2) as (one, two):
        _settings(home, one.url, "plaintext-token")
        completed = run_cli(["share", builder.session_id, "--yes", "--no-copy"], workdir, home, CC_SHARE_TOKEN=alice)
        assert completed.returncode == 1 and "share.token looks like a raw token and is refused" in completed.stderr
        _settings(home, one.url)
        completed = run_cli(["share", builder.session_id, "--yes", "--no-copy"], workdir, home)
        assert completed.returncode == 1 and "share.token names the environment variable CC_SHARE_TOKEN" in completed.stderr
        completed = run_ok(["share", builder.session_id, "--yes", "--no-copy"], workdir, home, CC_SHARE_TOKEN=alice)
        url = completed.stdout.strip()
        info = json.loads(transcript.with_name(f"{builder.session_id}.share.json").read_text())
        assert url == info["url"] and url.startswith(one.url + "/s/") and info["server"] == one.url
        status, page = call(two.url, url.removeprefix(one.url))
        assert status == 200 and "shared prompt" in page and GITHUB_TOKEN not in page
        again = run_ok(["share", builder.session_id, "--yes", "--no-copy"], workdir, home, CC_SHARE_TOKEN=alice)
        assert again.stdout.strip() == url, "sharing again keeps the link"
        status, page = call(two.url, url.removeprefix(one.url))
        assert page.count("shared prompt") == 1, "nothing was sent twice"
        completed = run_cli(["share", builder.session_id, "--yes", "--no-copy"], workdir, home, CC_SHARE_TOKEN="ccs_bad")
        assert completed.returncode == 1 and "the share service refused: wrong or missing publisher token" in completed.stderr
        run_ok(["unshare", builder.session_id], workdir, home, CC_SHARE_TOKEN=alice)
        assert call(two.url, url.removeprefix(one.url))[0] == 410
        assert not transcript.with_name(f"{builder.session_id}.share.json").exists()
    completed = run_cli(["share", builder.session_id, "--yes", "--no-copy"], workdir, home, CC_SHARE_TOKEN=alice)
    assert completed.returncode == 1 and completed.stderr.startswith("error: the share service at http://127.0.0.1:")
    assert "Traceback" not in completed.stderr


def test_the_outbox_waits_for_a_service_that_is_down(postgres: Cluster, home: Path, workdir: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.sessions.files import SessionFiles
    from commandcode.sharing import client
    from commandcode.sharing import publisher as publishing

    alice = token(postgres.url, home, workdir, "alice")
    monkeypatch.setenv("CC_SHARE_TOKEN", alice)
    builder = TranscriptBuilder(workdir)
    builder.user("first prompt")
    builder.assistant("first reply")
    files = SessionFiles.for_transcript(builder.write(home))
    replica = Replica(postgres.url, home, workdir)
    port = replica.port
    try:
        _settings(home, replica.url)
        notices: list[str] = []
        url = client.publish(files, notice=notices.append)
        share = json.loads(files.share.read_text())
        viewer = Viewer([port], url.removeprefix(replica.url).replace("?", "/events?"))
        viewer.start()
        replica.stop()
        runner = publishing.Publisher(files, publishing.Service(replica.url, alice), share["shareId"], notices.append)
        for turn in range(3):
            builder.user(f"prompt {turn}")
            builder.assistant(f"reply {turn}")
            builder.write(home)
            runner.sync()
            assert runner.drain() is False
        assert len([notice for notice in notices if "does not answer" in notice]) == 1, notices
        queued = runner.outbox.last()
        assert queued == 8 and runner.outbox.sent == 2
        replica = Replica(postgres.url, home, workdir, "--port", str(port))
        assert runner.drain() is True and notices[-1] == "the share service is back: the page caught up"
        # the outbox replayed from the start (its sent mark lost): nothing is stored twice
        runner.outbox.sent_path.unlink()
        replayed = publishing.Publisher(files, publishing.Service(replica.url, alice), share["shareId"])
        assert replayed.outbox.sent == 0 and replayed.drain() is True
        viewer.target = queued
        wait_for(viewer.finished, what="the drained rows")
        assert viewer.seqs == list(range(1, queued + 1))
        assert sum("reply 2" in html for html in viewer.html) == 1
    finally:
        replica.stop()


class _Shell:
    """What `/share` and `/unshare` use of the shell (`project`: the session's context)."""

    def __init__(self, files: Any, cwd: Path) -> None:
        from commandcode.config.context import ProjectContext

        self.agent = type("Agent", (), {"files": files})()
        self.project = ProjectContext(cwd)
        self.printed: list[str] = []
        self.notices: list[str] = []

    def confirm(self, question: str, *, default: bool = False) -> bool:
        return True

    def print(self, text: str) -> None:
        self.printed.append(text)

    def copy(self, text: str) -> str:
        return "copied"

    def notice(self, text: str) -> None:
        self.notices.append(text)


def test_slash_share_follows_each_commit_on_a_sqlite_store(home: Path, workdir: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.sessions.files import SessionFiles
    from commandcode.sharing import client, publisher
    from commandcode.shell.commands.share import COMMANDS

    share, unshare = COMMANDS
    store = f"sqlite:///{tmp_path / 'shares.db'}"
    monkeypatch.setenv("CC_SHARE_TOKEN", token(store, home, workdir, "alice"))
    builder = TranscriptBuilder(workdir)
    builder.user("first prompt")
    builder.assistant("first reply")
    transcript = builder.write(home)
    files = SessionFiles.for_transcript(transcript)
    with replicas(store, home, workdir, 2) as (one, two):
        _settings(home, one.url)
        shell = _Shell(files, workdir)
        try:
            share.run(shell, "")  # type: ignore[arg-type]
            url = shell.printed[-1].removeprefix("Shared at ")
            viewer = Viewer([two.port], url.removeprefix(one.url).replace("?", "/events?"))
            viewer.start()
            builder.user("second prompt")
            builder.assistant("second-reply-marker")
            builder.write(home)  # a commit: the background publisher sends it
            wait_for(lambda: any("second-reply-marker" in html for html in viewer.html), what="the commit on the page")
            # a resumed shell re-arms the share: the same link, and it follows again
            publisher.unfollow(files.session_id)
            assert client.rearm(files, shell.notice, shell.project) == f"this session is shared live at {url}"
            builder.user("third prompt")
            builder.assistant("third-reply-marker")
            builder.write(home)
            wait_for(lambda: any("third-reply-marker" in html for html in viewer.html), what="the re-armed share")
            assert viewer.seqs == list(range(1, len(viewer.seqs) + 1))
            unshare.run(shell, "")  # type: ignore[arg-type]
            assert call(two.url, url.removeprefix(one.url))[0] == 410
            wait_for(viewer.stopping.is_set, what="the stream's end")
        finally:
            publisher.unfollow(files.session_id)


def test_a_stopped_replica_ends_its_streams_and_they_resume_on_another(home: Path, workdir: Path,
                                                                       tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'shares.db'}"
    alice = token(store, home, workdir, "alice")
    with replicas(store, home, workdir, 2) as (one, two):
        share_id, secret = open_share(one.url, alice)
        path = f"/api/shares/{share_id}/rows"
        viewer = Viewer([one.port, two.port], f"/s/{share_id}/events?secret={secret}")
        viewer.start()
        assert call(one.url, path, rows(1, 2), auth=alice)[0] == 200
        wait_for(lambda: viewer.seqs == [1, 2], what="the first rows")
        assert one.stop() == "", "a stop prints nothing"  # SIGTERM, with a stream open
        assert one.process.returncode == 0
        assert call(two.url, path, rows(3, 2), auth=alice)[0] == 200
        viewer.target = 4
        wait_for(viewer.finished, what="the stream resumed on the other replica")
        assert viewer.seqs == [1, 2, 3, 4] and viewer.connects == 2 and viewer.statuses == [200, 200]


def test_a_viewer_that_stops_reading_is_dropped(home: Path, workdir: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'shares.db'}"
    alice = token(store, home, workdir, "alice")
    with replicas(store, home, workdir, 1, "--send-timeout", "1", "--max-per-client", "1") as (one,):
        share_id, secret = open_share(one.url, alice)
        stuck = socket.create_connection(("127.0.0.1", one.port), timeout=30, source_address=("127.0.0.3", 0))
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.sendall(f"GET /s/{share_id}/events?secret={secret} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        wait_for(lambda: call(one.url, "/healthz", source="127.0.0.3")[0] == 429, what="the address at its limit")
        big = "x" * 60_000
        for first in range(1, 201, 4):  # 12 MB: far more than the socket buffers on both sides hold
            batch = {"rows": [{"seq": seq, "kind": "row", "html": big, "messages": 1} for seq in range(first, first + 4)]}
            assert call(one.url, f"/api/shares/{share_id}/rows", batch, auth=alice, source="127.0.0.2")[0] == 200
        # the stuck viewer is dropped: its connection ends and its address is served again
        wait_for(lambda: call(one.url, "/healthz", source="127.0.0.3")[0] == 200, what="the stuck viewer dropped")
        received = 0
        try:
            while chunk := stuck.recv(1 << 20):
                received += len(chunk)
        except ConnectionResetError:
            pass
        stuck.close()
        assert received < 12_000_000, "it never got every row"
