"""The real Command Code CLI (`command-code` from npm, offline against the stub model) resumes a
session whose last turn our shell interrupted: it rebuilds the same context we send (the stopped
command's call and result, then the `Interrupted by user` marker, its own interrupt message) and
sends it on, so both programs tell the model the turn was cut (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import transcripts
from helpers.npm_programs import Programs
from helpers.real_cli import RealCli, our_context, same_context, sent_context
from helpers.terminal import shell_session

pytestmark = [pytest.mark.npm, pytest.mark.slow, pytest.mark.terminal]


def test_the_real_cli_resumes_an_interrupted_turn_as_we_send_it(npm_programs: Programs, tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    real = RealCli(npm_programs, home, cwd)
    shell = shell_session(cwd, real.data, ["--yolo"], columns=200)
    shell.exchange("a first turn", "You said: a first turn")
    marker = cwd / "started"
    shell.line(f'call bash {{"command": "echo so-far; touch {marker}; sleep 300"}}')
    shell.interrupt_once(marker)
    shell.line("/exit")
    assert shell.wait_exit() == 0
    [transcript] = transcripts(real.data)
    ours = our_context(transcript.stem, cwd, real.data)
    assert ours[-3:] == [("tool_use", "bash"), ("tool_result", ""), ("user", "Interrupted by user")], ours
    resumed = real("-r", transcript.stem, "-p", "what happened?")
    # it sends the marker and the new prompt as one user message (consecutive user messages merge)
    same_context([*ours, ("user", "what happened?")], sent_context(resumed, with_prompt=True))
    body = next(request["body"] for request in resumed.requests if request["path"].endswith("/chat/completions"))
    wire = json.dumps(body["messages"])
    assert "so-far\\nInterrupted by user: the command was stopped" in wire and '"Interrupted by user"' in wire
