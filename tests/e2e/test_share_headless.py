"""A commit made with no shell open (`commandcode -p -r REF`, `-c -p`) on a session shared with a
team share service reaches the service: a real service process (SQLite store) and real `-p`
runs. With the service down the run still succeeds (one warning line), and a later `share REF`
sends what it committed: nothing lost, nothing sent twice. With the service slow (a proxy that
waits before each request), a run that exits before its re-arm is answered still leaves its own
turn queued in the durable outbox, and the next process sends it once."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest

from helpers.cli import run_cli, run_ok
from helpers.postgres import Replica, token
from helpers.slow_proxy import slow_proxy


def _page(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode("utf-8"))


def _session_id(stdout: str) -> str:
    return str(json.loads(stdout)["session_id"])


def test_a_headless_commit_reaches_the_service(home: Path, workdir: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'shares.db'}"
    alice = token(store, home, workdir, "alice")
    replica = Replica(store, home, workdir)
    try:
        home.mkdir(parents=True, exist_ok=True)
        (home / "settings.json").write_text(json.dumps({"share": {"server": replica.url, "token": "$CC_SHARE_TOKEN"}}))
        first = run_ok(["-p", "first-prompt-marker", "--output-format", "json"], workdir, home)
        session_id = _session_id(first.stdout)
        url = run_ok(["share", session_id, "--yes", "--no-copy"], workdir, home, CC_SHARE_TOKEN=alice).stdout.strip()
        assert "first-prompt-marker" in _page(url)
        # a -p run on the shared session, no shell and no other process: its commit is on the page
        resumed = run_ok(["-p", "second-prompt-marker", "-r", session_id], workdir, home, CC_SHARE_TOKEN=alice)
        assert "warning" not in resumed.stderr, resumed.stderr
        page = _page(url)
        assert "second-prompt-marker" in page and "You said: second-prompt-marker" in page
        share_id = json.loads(next(home.rglob(f"{session_id}.share.json")).read_text())["shareId"]
        outbox = home / "share" / "outbox"
        queued = len((outbox / f"{share_id}.jsonl").read_text().splitlines())
        assert json.loads((outbox / f"{share_id}.sent.json").read_text()) == {"sent": queued}, "the outbox drained"
        run_ok(["-c", "-p", "third-prompt-marker"], workdir, home, CC_SHARE_TOKEN=alice)
        assert "You said: third-prompt-marker" in _page(url)
        # the service down: the run succeeds with one warning line, and a later `share REF` sends its commit
        port = replica.port
        replica.stop()
        down = run_cli(["-p", "fourth-prompt-marker", "-r", session_id], workdir, home, CC_SHARE_TOKEN=alice)
        assert down.returncode == 0 and "You said: fourth-prompt-marker" in down.stdout
        warnings = [line for line in down.stderr.splitlines() if "share" in line]
        assert len(warnings) == 1 and "its page is not live" in warnings[0] and "does not answer" in warnings[0], \
            down.stderr
        assert "Traceback" not in down.stderr
        replica = Replica(store, home, workdir, "--port", str(port))
        assert "fourth-prompt-marker" not in _page(url)
        again = run_ok(["share", session_id, "--yes", "--no-copy"], workdir, home, CC_SHARE_TOKEN=alice)
        assert again.stdout.strip() == url
        page = _page(url)
        for marker in ("first", "second", "third", "fourth"):
            assert page.count(f"You said: {marker}-prompt-marker") == 1, f"{marker}: nothing lost or sent twice"
    finally:
        replica.stop()


@pytest.mark.parametrize("delay", [1.0, 5.0])
def test_a_headless_commit_on_a_slow_service_waits_in_the_outbox(delay: float, home: Path, workdir: Path,
                                                                  tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'shares.db'}"
    alice = token(store, home, workdir, "alice")
    replica = Replica(store, home, workdir)
    try:
        with slow_proxy(replica.url, 0.0) as proxy:
            home.mkdir(parents=True, exist_ok=True)
            (home / "settings.json").write_text(json.dumps({"share": {"server": proxy.url, "token": "$CC_SHARE_TOKEN"}}))
            session_id = _session_id(run_ok(["-p", "first-prompt-marker", "--output-format", "json"], workdir,
                                            home).stdout)
            url = run_ok(["share", session_id, "--yes", "--no-copy"], workdir, home, CC_SHARE_TOKEN=alice).stdout.strip()
            direct = url.replace(proxy.url, replica.url)  # the page, read without the proxy's wait
            share_id = json.loads(next(home.rglob(f"{session_id}.share.json")).read_text())["shareId"]
            outbox = home / "share" / "outbox" / f"{share_id}.jsonl"
            proxy.delay = delay
            began = time.monotonic()
            slow = run_cli(["-p", "second-prompt-marker", "-r", session_id], workdir, home, CC_SHARE_TOKEN=alice)
            took = time.monotonic() - began
            assert slow.returncode == 0 and "You said: second-prompt-marker" in slow.stdout, slow.stderr
            assert "Traceback" not in slow.stderr
            queued = [json.loads(line) for line in outbox.read_text().splitlines()]
            assert [entry["seq"] for entry in queued] == list(range(1, len(queued) + 1))
            assert sum("You said: second-prompt-marker" in entry["html"] for entry in queued) == 1, \
                "the run queued its own turn before it exited"
            if delay > took:  # it exited before its re-arm was even answered: nothing was sent yet
                assert "second-prompt-marker" not in _page(direct)
            proxy.delay = 0.0
            again = run_ok(["share", session_id, "--yes", "--no-copy"], workdir, home, CC_SHARE_TOKEN=alice)
            assert again.stdout.strip() == url
            page = _page(direct)
            for marker in ("first", "second"):
                assert page.count(f"You said: {marker}-prompt-marker") == 1, f"{marker}: nothing lost or sent twice"
            sent = json.loads(outbox.with_name(f"{share_id}.sent.json").read_text())["sent"]
            assert sent == len(outbox.read_text().splitlines()), "the outbox drained"
    finally:
        replica.stop()
