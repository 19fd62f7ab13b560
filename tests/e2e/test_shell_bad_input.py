"""Bad input at the real shell (pexpect + pyte): an unreachable provider, a settings file with a
syntax error at launch, and Esc during a turn with messages queued. Each is one clear line, the
session stays intact and resumable, and nothing the user typed is lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import entries, transcripts
from helpers.openai_stub import write_providers
from helpers.terminal import ESC, shell_session

pytestmark = pytest.mark.terminal


def test_an_unreachable_provider_is_one_line_and_the_turn_is_recorded(home: Path, workdir: Path) -> None:
    write_providers(home, "http://127.0.0.1:1/v1", api_key=False)  # port 1: connection refused
    shell = shell_session(workdir, home, ["--model", "local/stub-model"], columns=250)
    screen = shell.exchange("are you there", "error: ")
    error_lines = [line for line in screen.splitlines() if line.startswith("error: ")]
    assert len(error_lines) == 1 and "Traceback" not in screen, screen
    shell.exchange("/model commandcode/offline", "model: commandcode/offline")
    shell.exchange("and now", "You said: and now")  # the shell and the session go on
    shell.line("/exit")
    assert shell.wait_exit() == 0
    [transcript] = transcripts(home)
    texts = [block.get("text", "") for entry in entries(transcript) if entry["type"] == "message"
             for block in entry["message"]["content"]]
    assert texts[0] == "are you there" and texts[1].startswith("Error: ")  # as the real CLI records it


def test_a_settings_file_with_a_syntax_error_refuses_the_turn_in_one_line_and_is_left_alone(home: Path,
                                                                                              workdir: Path) -> None:
    settings = workdir / ".commandcode" / "settings.json"
    settings.parent.mkdir()
    broken = '{"permissions": {"allow":\n  }\n'
    settings.write_text(broken)
    shell = shell_session(workdir, home, columns=250)
    assert f"warning: {settings}:2:" in shell.wait_screen("warning: ")  # at launch: path:line:col
    screen = shell.exchange("still works", "hint: fix the file by hand")
    assert f"error: {settings}:2:3: " in screen and "Traceback" not in screen, screen
    assert settings.read_text() == broken and transcripts(home) == []  # untouched, nothing half-saved
    settings.write_text('{"permissions": {"allow": []}}\n')
    shell.exchange("fixed now", "You said: fixed now")  # the same shell goes on once it is fixed
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert len(transcripts(home)) == 1


def test_esc_puts_the_queued_messages_back_into_the_editor(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, ["--yolo"], columns=250)
    shell.exchange('call bash {"command": "sleep 30"}', "running — Esc interrupts")
    shell.line("first queued")
    shell.exchange("second queued", "queued: second queued")
    shell.send(ESC)
    shell.wait_screen("Interrupted · what was said so far is kept")
    screen = shell.wait_screen("> first queued")
    assert "second queued" in screen.splitlines()[screen.splitlines().index("> first queued") + 1], screen
    shell.send("\r")  # sends the editor's text, both lines, as one prompt
    shell.wait_screen("You said: first queued")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    [transcript] = transcripts(home)
    prompts = [entry["message"]["content"][0].get("text") for entry in entries(transcript)
               if entry["type"] == "message" and entry["message"]["role"] == "user"]
    assert prompts == ['call bash {"command": "sleep 30"}', None, "Interrupted by user",
                       "first queued\nsecond queued"]  # the interrupted turn kept (with the call's result), marked
