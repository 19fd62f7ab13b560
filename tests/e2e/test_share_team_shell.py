"""`/share` and `/unshare` on a team share service, in the real shell through a pty (pexpect, the
offline model): two replicas on one PostgreSQL database, the shell publishing to one, a plain HTTP
event-stream viewer following the other. The viewer gets the shared turn, then the next turn as
the shell commits it, and `end` when `/unshare` revokes the share; the page is then 410."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from helpers.cli import wait_for
from helpers.postgres import Cluster, replicas, token
from helpers.sse import Viewer
from helpers.terminal import shell_session

pytestmark = pytest.mark.terminal


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_slash_share_on_a_team_service_in_a_real_shell(postgres: Cluster, home: Path, workdir: Path) -> None:
    alice = token(postgres.url, home, workdir, "alice")
    with replicas(postgres.url, home, workdir, 2) as (one, two):
        home.mkdir(parents=True, exist_ok=True)
        (home / "settings.json").write_text(json.dumps({"share": {"server": one.url, "token": "$CC_SHARE_TOKEN"}}))
        shell = shell_session(workdir, home, columns=250, CC_SHARE_TOKEN=alice)
        try:
            shell.exchange("first-turn-marker", "You said: first-turn-marker")
            shell.exchange("/share", "on the share server?")
            shell.line("y")
            match = re.search(r"Shared at (http://\S+)", shell.wait_screen("Shared at http://"))
            assert match, shell.text()
            url = match.group(1)
            assert url.startswith(one.url + "/s/") and "?secret=" in url
            path = url.removeprefix(one.url)
            viewer = Viewer([two.port], path.replace("?", "/events?"))  # on the other replica
            viewer.start()
            wait_for(lambda: any("You said: first-turn-marker" in html for html in viewer.html),
                     what="the shared turn on the other replica")
            shell.exchange("second-turn-marker", "You said: second-turn-marker")
            wait_for(lambda: any("You said: second-turn-marker" in html for html in viewer.html),
                     what="the next commit on the other replica")
            assert viewer.seqs == list(range(1, len(viewer.seqs) + 1)), "every row once, in order"
            assert sum("You said: first-turn-marker" in html for html in viewer.html) == 1
            shell.exchange("/unshare", "Unshared: the link no longer works")
            wait_for(viewer.stopping.is_set, what="the stream's end event")
            assert viewer.connects == 1
            assert _status(two.url + path) == 410 and _status(one.url + path) == 410
            shell.line("/exit")
            assert shell.wait_exit() == 0
            assert "Traceback" not in shell.text()
        finally:
            shell.close()
