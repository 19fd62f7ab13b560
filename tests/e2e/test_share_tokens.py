"""`commandcode share token list|revoke --store URL` on SQLite and PostgreSQL stores, with a real
replica running: a revoked token is refused at once, the other users' keep working, and a new
`token create` gives the user one again; the bad inputs are one line each."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import assert_error_lines, run_cli, run_ok
from helpers.postgres import Replica, token


def _whoami(url: str, user_token: str) -> int:
    request = urllib.request.Request(url + "/api/whoami", headers={"Authorization": f"Bearer {user_token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


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
        assert revoked.stdout.strip() == f"revoked {carol}'s publisher token"
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
