"""A reply streams into the shell as it arrives, through a real pty (pexpect + pyte): the offline
model's token-sized chunks show one by one, and a served model's finished markdown blocks are
printed rendered while the block still being written stays in the live region."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import transcripts
from helpers.openai_stub import OpenAIStub, text
from helpers.terminal import ESC, shell_session

pytestmark = pytest.mark.terminal


def test_the_offline_models_reply_shows_chunk_by_chunk(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, COMMANDCODE_OFFLINE_TOKEN_MS="300")  # about 3 s for the reply
    shell.wait_prompt()
    start = len(shell.raw)
    shell.line("hi there")
    screen = shell.wait_screen("Offl")  # the first chunk, in the live region
    assert "You said: hi there" not in screen, screen  # the rest is still on its way
    screen = shell.wait_screen("You said: hi there")
    assert screen.count("Offline model reply.") == 1, screen  # printed once, not once per chunk
    assert b"\x1b[2J" not in shell.raw[start:]  # no whole-screen clear: only the live region is redrawn
    shell.line("/exit")
    assert shell.wait_exit() == 0


def test_a_finished_block_is_printed_rendered_while_the_next_one_streams(openai_stub: OpenAIStub, home: Path,
                                                                         workdir: Path) -> None:
    reply = text("Intro with **bold** words.\n\nSecond block being wri", "tten now.", usage=(10, 5, 0))
    reply.hang_after_first_chunk = True
    openai_stub.reply(reply)
    shell = shell_session(workdir, home, ["--model", "local/stub-model"])
    shell.wait_prompt()
    shell.line("stream please")
    shell.wait_screen("Intro with bold words.")  # rendered markdown: no asterisks
    screen = shell.wait_screen("Second block being wri")  # the live region, as plain text
    assert "**bold**" not in screen and "tten now." not in screen, screen  # the stub holds the rest back
    openai_stub.release.set()
    screen = shell.wait_screen("Second block being written now.")
    assert screen.count("Intro with bold words.") == 1, screen
    shell.line("/exit")
    assert shell.wait_exit() == 0


def test_esc_mid_stream_stops_the_reply_and_keeps_what_streamed(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, COMMANDCODE_OFFLINE_TOKEN_MS="300")
    shell.wait_prompt()
    shell.line("stop me")
    shell.wait_screen("Offl")
    shell.send(ESC)
    screen = shell.wait_screen("Interrupted · what was said so far is kept")
    assert "You said: stop me" not in screen, screen
    shell.pump(1.0)  # the stream really stopped: nothing more of the reply arrives
    assert "You said: stop me" not in shell.text()
    shell.line("/exit")
    assert shell.wait_exit() == 0
    [transcript] = transcripts(home)  # the prompt and the reply so far, marked (tests/e2e/test_shell_interrupt.py)
    assert b"You said: stop me" not in transcript.read_bytes() and b"Interrupted by user" in transcript.read_bytes()
