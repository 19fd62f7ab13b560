"""`/share --expires 24h` in the shell, as `commandcode share REF --expires` does: the question
says when the share ends, the page stops by itself, sharing again with a new `--expires` moves
the end, and a bad duration or an unknown option is one usage error that publishes nothing.
Against a real share server (`commandcode share serve`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.errors import UsageError
from commandcode.shell.slash import registry
from helpers.cli import wait_for
from helpers.fake_shell import FakeShell
from helpers.share import http_get, share_server
from helpers.transcripts import one_turn_session


def _path(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def test_share_expires_ends_the_share_and_a_new_expiry_moves_it(home: Path, workdir: Path) -> None:
    builder, transcript = one_turn_session(home, workdir, "shared prompt")
    share_file = transcript.with_name(f"{builder.session_id}.share.json")
    share = registry()["share"]
    with AgentSession.start(workdir, reference=builder.session_id) as agent, share_server(home, workdir) as server:
        shell = FakeShell(agent, answers=[True])
        share.run(shell, "--expires 1h")
        assert "It ends by itself in 1h." in shell.questions[0]
        url = shell.copied[-1]
        first_end = json.loads(share_file.read_text())["expiresAt"]
        assert http_get(server["port"], _path(url))[0] == 200
        share.run(shell, "--expires=2s")  # shared already: re-copied, with the new end, no question
        assert len(shell.questions) == 1 and shell.copied[-1] == url and "new expiry" in shell.lines[-1]
        assert json.loads(share_file.read_text())["expiresAt"] < first_end
        wait_for(lambda: http_get(server["port"], _path(url))[0] == 404, what="the share to expire")


@pytest.mark.parametrize("args", ["--expires soon", "--expires", "--expires 1h extra", "--public", "--expires=0s"])
def test_bad_share_options_are_one_usage_error_and_publish_nothing(home: Path, workdir: Path, args: str) -> None:
    builder, transcript = one_turn_session(home, workdir)
    with AgentSession.start(workdir, reference=builder.session_id) as agent:
        shell = FakeShell(agent, answers=[True])
        with pytest.raises(UsageError) as refused:
            registry()["share"].run(shell, args)
        assert "\n" not in str(refused.value) and refused.value.hint
    assert shell.questions == [] and shell.copied == []
    assert not transcript.with_name(f"{builder.session_id}.share.json").exists()
