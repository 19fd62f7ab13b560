"""Resuming a shared session in the shell re-arms its live page (the issue's "resuming a shared
session re-arms the updates"), through a pty and real share servers: a server that lost the share
serves it again with the same secret, the next turn reaches the page, and with no
server running one notice says the page is not live while the shell works on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run_ok
from helpers.share import http_get, share_server
from helpers.terminal import shell_session
from helpers.transcripts import one_turn_session

pytestmark = pytest.mark.terminal


def _path(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def test_resuming_a_shared_session_re_arms_its_page(home: Path, workdir: Path) -> None:
    builder, transcript = one_turn_session(home, workdir, "shared prompt")
    with share_server(home, workdir):
        url = run_ok(["share", builder.session_id, "--yes", "--no-copy"], workdir, home).stdout.strip()
    (home / "share" / "shares.json").unlink()  # the next server never heard of the share
    share_file = transcript.with_name(f"{builder.session_id}.share.json")
    secret = json.loads(share_file.read_text())["secret"]
    assert secret in url

    shell = shell_session(workdir, home, ["-r", builder.session_id])  # no server: the page is not live
    try:
        shell.wait_screen("this session is shared, but its page is not live")
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()

    with share_server(home, workdir) as server:
        assert http_get(server["port"], _path(url))[0] == 404
        shell = shell_session(workdir, home, ["-r", builder.session_id])
        try:
            screen = shell.wait_screen(f"http://127.0.0.1:{server['port']}/s/{builder.session_id}")
            assert "this session is shared live at" in screen  # the notice wraps at words: the URL on a row of its own
            record = json.loads(share_file.read_text())
            assert record["secret"] == secret  # the same secret: only the new server's port differs
            url = record["url"]
            status, page = http_get(server["port"], _path(url))
            assert status == 200 and b"shared prompt" in page
            shell.exchange("a prompt after the resume", "You said: a prompt after the resume")
            shell.wait_prompt()
            status, page = http_get(server["port"], _path(url))
            assert status == 200 and b"a prompt after the resume" in page
            shell.line("/exit")
            assert shell.wait_exit() == 0
        finally:
            shell.close()
