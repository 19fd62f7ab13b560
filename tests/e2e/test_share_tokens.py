"""`commandcode share token list|revoke --store URL` on SQLite and PostgreSQL stores, with a real
replica running: a revoked token is refused at once, the other users' keep working, and a new
`token create` gives the user one again; a revoked user's live shares end on every replica at
once (streams, pages, publishes) and stay ended; the bad inputs are one line each."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import assert_error_lines, run_cli, run_ok, wait_for
from helpers.postgres import Cluster, Replica, replicas, token
from helpers.sse import Viewer


def _whoami(url: str, user_token: str) -> int:
    request = urllib.request.Request(url + "/api/whoami", headers={"Authorization": f"Bearer {user_token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def _post(url: str, path: str, body: Any, user_token: str) -> tuple[int, Any]:
    request = urllib.request.Request(url + path, method="POST", data=json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {user_token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return int(error.code), json.loads(error.read())


def _page(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return int(response.status), str(response.read().decode())
    except urllib.error.HTTPError as error:
        return int(error.code), str(error.read().decode())


def _listed(store: str, home: Path, workdir: Path) -> dict[str, list[str]]:
    completed = run_ok(["share", "token", "list", "--store", store], workdir, home)
    return {line.split()[0]: line.split()[1:] for line in completed.stdout.splitlines()}


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_list_and_revoke_tokens(kind: str, home: Path, workdir: Path, tmp_path: Path, request: Any) -> None:
    store = f"sqlite:///{tmp_path / 'shares.db'}" if kind == "sqlite" else request.getfixturevalue("postgres").url
    if kind == "sqlite":
        empty = run_ok(["share", "token", "list", "--store", store], workdir, home)
        assert empty.stdout == "" and "no publisher tokens yet" in empty.stderr
    carol, dave = f"carol-{kind}", f"dave-{kind}"
    carol_token, dave_token = token(store, home, workdir, carol), token(store, home, workdir, dave)
    replica = Replica(store, home, workdir)
    try:
        opened = urllib.request.Request(replica.url + "/api/shares", method="POST",
                                        data=json.dumps({"sessionId": "s1", "title": "t"}).encode(),
                                        headers={"Authorization": f"Bearer {carol_token}"})
        with urllib.request.urlopen(opened, timeout=30) as response:
            assert response.status == 200
        listed = _listed(store, home, workdir)
        assert listed[carol][0] == "active" and listed[carol][4] == "1"
        assert listed[dave][0] == "active" and listed[dave][4] == "0"
        assert _whoami(replica.url, carol_token) == 200
        revoked = run_ok(["share", "token", "revoke", carol, "--store", store], workdir, home)
        assert revoked.stdout.strip() == f"revoked {carol}'s publisher token; 1 live share of theirs ended"
        assert _whoami(replica.url, carol_token) == 401, "refused at once by the running replica"
        assert _whoami(replica.url, dave_token) == 200
        assert _listed(store, home, workdir)[carol][0] == "revoked"
        again = run_ok(["share", "token", "revoke", carol, "--store", store], workdir, home)
        assert again.stdout.strip() == f"{carol}'s publisher token was revoked already"
        renewed = token(store, home, workdir, carol)
        assert _whoami(replica.url, renewed) == 200 and _whoami(replica.url, carol_token) == 401
        assert _listed(store, home, workdir)[carol][0] == "active"
        assert_error_lines(run_cli(["share", "token", "revoke", "nobody-here", "--store", store], workdir, home),
                           error_contains="the share store has no user 'nobody-here'")
    finally:
        replica.stop()


def test_token_usage_errors(home: Path, workdir: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'shares.db'}"
    for words in (["token", "list", "extra"], ["token", "frob", "x"], ["token", "revoke"]):
        completed = run_cli(["share", *words, "--store", store], workdir, home)
        assert completed.returncode == 2 and "expected `commandcode share token create|revoke USER" in completed.stderr
    completed = run_cli(["share", "token", "list"], workdir, home)
    assert_error_lines(completed, error_contains="a token lives in the team service's store", exit_code=2)


def test_a_revoked_users_shares_end_on_every_replica(postgres: Cluster, home: Path, workdir: Path) -> None:
    erin, frank = token(postgres.url, home, workdir, "erin"), token(postgres.url, home, workdir, "frank")
    with replicas(postgres.url, home, workdir, 2) as (one, two):
        shares = {}
        for name, user_token in (("erin", erin), ("frank", frank)):
            status, opened = _post(one.url, "/api/shares", {"sessionId": "s1", "title": "t"}, user_token)
            assert status == 200
            row = {"seq": 1, "kind": "row", "html": f"<p>{name}</p>", "messages": 1}
            assert _post(one.url, f"/api/shares/{opened['shareId']}/rows", {"rows": [row]}, user_token)[0] == 200
            shares[name] = f"/s/{opened['shareId']}?secret={opened['secret']}"
        watchers = [Viewer([replica.port], shares[name].replace("?", "/events?"))
                    for replica in (one, two) for name in ("erin", "frank")]
        for watcher in watchers:
            watcher.start()
        wait_for(lambda: all(watcher.seqs == [1] for watcher in watchers), what="every stream's first row")
        revoked = run_ok(["share", "token", "revoke", "erin", "--store", postgres.url], workdir, home)
        assert revoked.stdout.strip() == "revoked erin's publisher token; 1 live share of theirs ended"
        # erin's streams end on both replicas (by the notification: they never reconnect), frank's go on
        wait_for(lambda: watchers[0].stopping.is_set() and watchers[2].stopping.is_set(), what="erin's streams ended")
        assert [watcher.connects for watcher in watchers] == [1, 1, 1, 1]
        assert not watchers[1].stopping.is_set() and not watchers[3].stopping.is_set()
        for replica in (one, two):
            assert _page(replica.url + shares["erin"]) == (410, "this share has ended: the share was revoked\n")
            assert _page(replica.url + shares["frank"])[0] == 200
        erin_rows = shares["erin"].split("?")[0].replace("/s/", "/api/shares/") + "/rows"
        row = {"seq": 2, "kind": "row", "html": "<p>late</p>", "messages": 2}
        assert _post(two.url, erin_rows, {"rows": [row]}, erin)[0] == 401
        # a new token for erin publishes again, but not into the shares that ended
        renewed = token(postgres.url, home, workdir, "erin")
        assert _post(two.url, erin_rows, {"rows": [row]}, renewed) == (410, {"error": "the share was revoked"})
        assert _page(two.url + shares["erin"])[0] == 410
        assert _post(two.url, "/api/shares", {"sessionId": "s2", "title": "t"}, renewed)[0] == 200
        again = run_ok(["share", "token", "revoke", "erin", "--store", postgres.url], workdir, home)
        assert again.stdout.strip() == "revoked erin's publisher token; 1 live share of theirs ended"
