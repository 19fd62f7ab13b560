"""The shell tells the truth, through the real shell in a pty (issue 31): after a rewind the context
the next turn sends is the rewound one (it was the whole pre-rewind list), the status line's
tokens and checkpoint count agree with `sessions status` and `checkpoints list`, the meter counts
from the provider's usage in the model's own window, and a resume shows where the conversation
stands."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_json, transcripts
from helpers.openai_stub import OpenAIStub
from helpers.terminal import CTRL_C, ShellSession, shell_session

pytestmark = pytest.mark.terminal

DOWN = "\x1b[B"


def _rewind_conversation_to_second(shell: ShellSession) -> None:
    """/rewind → checkpoint 2 (rows are newest first) → "Restore conversation only" → yes."""
    shell.line("/rewind")
    shell.wait_screen("Enter: choose what to restore")
    shell.send(DOWN)
    shell.send("\r")
    shell.wait_screen("Checkpoint 2: bravo")
    shell.wait_screen("Summarize from here")
    shell.send("\r")  # the first action: no code changed, so "Restore conversation only"
    shell.wait_screen("Yes, restore")
    shell.send("\r")  # the preselected answer is the action
    shell.wait_screen("Rewound to checkpoint 2")
    shell.wait_screen("> bravo")  # the rewound prompt is back in the input box, not sent
    shell.send(CTRL_C)  # cleared, to type another
    shell.wait_prompt()


def _status_line(shell: ShellSession, checkpoints: int) -> tuple[int, int]:
    """(tokens, checkpoints) of the status line once it shows `checkpoints` checkpoint(s)."""
    screen = shell.wait_screen(f" · {checkpoints} checkpoint(s)")
    found = re.search(r"([\d,]+) tokens \([\d.]+%\) · .* · (\d+) checkpoint\(s\)", screen)
    assert found, screen
    return int(found.group(1).replace(",", "")), int(found.group(2))


def _engine_numbers(home: Path, workdir: Path) -> tuple[int, int]:
    [transcript] = transcripts(home)
    status: Any = run_json(["sessions", "status", transcript.stem, "--json"], workdir, home)
    listed: Any = run_json(["checkpoints", "list", transcript.stem, "--json"], workdir, home)
    rows = listed if isinstance(listed, list) else listed["checkpoints"]
    assert status["checkpoints"]["count"] == len(rows)
    return status["context_tokens"], len(rows)


def _shows_the_engine(shell: ShellSession, home: Path, workdir: Path) -> tuple[int, int]:
    """The engine's (tokens, checkpoints) once the turn has ended, which the status line must come
    to show: it may lag a moment (the count of a new prompt's checkpoint is drawn before the
    tokens of its answer), so a status line read when it first shows the count can be a frame
    early."""
    shell.wait_until(lambda screen: "Esc interrupts" not in screen, "the turn's end (its live region gone)")
    tokens, count = _engine_numbers(home, workdir)
    screen = shell.wait_screen(f" {tokens:,} tokens (", f" · {count} checkpoint(s)")
    assert _status_line(shell, count) == (tokens, count), screen
    return tokens, count


def test_status_line_agrees_with_the_engine_after_a_conversation_rewind(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=160)
    for prompt in ("alpha", "bravo", "charlie"):
        shell.exchange(prompt, f"You said: {prompt}")
    before = _shows_the_engine(shell, home, workdir)
    assert before[1] == 3
    _rewind_conversation_to_second(shell)
    after = _shows_the_engine(shell, home, workdir)
    assert after[0] < before[0] and after[1] == 1
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert after == _engine_numbers(home, workdir)
    again = shell_session(workdir, home, ["-c"], columns=160)
    again.exchange("delta", "You said: delta")
    next_turn = _shows_the_engine(again, home, workdir)
    assert next_turn[1] == 2
    again.line("/exit")
    assert again.wait_exit() == 0
    assert next_turn == _engine_numbers(home, workdir)


def test_the_turn_after_a_rewind_sends_the_rewound_context(openai_stub: OpenAIStub, home: Path,
                                                           workdir: Path) -> None:
    shell = shell_session(workdir, home, ["--model", "local/stub-model"], columns=160)
    for prompt in ("alpha", "bravo", "charlie"):
        shell.exchange(prompt, f"You said: {prompt}")
    _rewind_conversation_to_second(shell)
    shell.exchange("delta", "You said: delta")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    sent = [message for message in openai_stub.requests[-1].body["messages"] if message["role"] == "user"]
    said = [message["content"] if isinstance(message["content"], str) else
            "".join(part.get("text", "") for part in message["content"]) for message in sent]
    assert [text for text in said if text in ("alpha", "bravo", "charlie", "delta")] == ["alpha", "delta"], said


def test_sessions_status_uses_the_sessions_model_and_its_window(openai_stub: OpenAIStub, home: Path,
                                                                workdir: Path) -> None:
    """`sessions status` of a session on a provider model: that model and the window
    providers.json gives it (it said commandcode/offline and 200,000), as /status does."""
    from helpers.cli import run_ok

    run_ok(["-p", "hello", "--model", "local/stub-model"], workdir, home)
    [transcript] = transcripts(home)
    status: Any = run_json(["sessions", "status", transcript.stem, "--json"], workdir, home)
    assert status["model"] == "local/stub-model" and status["context_window"] == 32_000
    shell = shell_session(workdir, home, ["-c"], columns=160)
    shell.exchange("/status", "context")
    shell.wait_screen("of 32,000", "local/stub-model")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert len(openai_stub.requests) >= 1


def test_the_meter_uses_the_providers_reported_usage(openai_stub: OpenAIStub, home: Path, workdir: Path) -> None:
    """A reply reporting 20,000 input tokens: the status line, /status and `sessions status`
    count from it (it showed the estimate of the messages alone, 19 tokens)."""
    from helpers.openai_stub import text

    openai_stub.reply(text("big context reply", usage=(20_000, 56, 0)))
    shell = shell_session(workdir, home, ["--model", "local/stub-model"], columns=160)
    shell.exchange("how full is it", "big context reply")
    tokens, _ = _status_line(shell, 1)
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert 20_056 <= tokens < 20_100, tokens
    assert tokens == _engine_numbers(home, workdir)[0]


def test_a_resume_shows_the_recent_conversation(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=160)
    for prompt in ("first question", "second question", "third question", "fourth question"):
        shell.exchange(prompt, f"You said: {prompt}")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    again = shell_session(workdir, home, ["-c"], columns=160)
    screen = again.wait_screen("> fourth question")
    assert "resumed session" in screen and "⎿ replied (" in screen
    assert "Offline model reply" not in screen.split("resumed session")[1]  # no old answer to take for a new one
    assert "> second question" in screen and "first question" not in screen.split("resumed session")[1]
    again.line("/exit")
    assert again.wait_exit() == 0


def test_a_headless_session_used_in_the_shell_is_listed(home: Path, workdir: Path) -> None:
    """The seed hides `-p` sessions because they carry no title; one the shell went on with is a
    session like any other: `sessions list` shows it (it stayed hidden, though -c continued it)."""
    from helpers.cli import read_meta_file, run_ok

    run_ok(["-p", "started headless"], workdir, home)
    [transcript] = transcripts(home)
    assert transcript.stem not in run_ok(["sessions", "list"], workdir, home).stdout
    shell = shell_session(workdir, home, ["-r", transcript.stem], columns=160)
    shell.exchange("went on in the shell", "You said: went on in the shell")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert "entrypoint" not in read_meta_file(transcript)
    listed = run_json(["sessions", "list", "--json"], workdir, home)
    rows = listed if isinstance(listed, list) else listed["sessions"]
    assert transcript.stem in {row.get("id") or row.get("session_id") for row in rows}


def test_a_named_headless_session_is_listed(home: Path, workdir: Path) -> None:
    """`-p -n NAME` (or a later rename) gives a headless session the title the seed hides them
    for lacking: `sessions list` shows it; an unnamed -p run stays hidden without --all."""
    from helpers.cli import run_ok

    run_ok(["-p", "unnamed headless"], workdir, home)
    run_ok(["-p", "named headless", "-n", "nightly-report"], workdir, home)
    listed = run_ok(["sessions", "list"], workdir, home).stdout
    assert "nightly-report" in listed and "unnamed headless" not in listed, listed
    assert "unnamed headless" in run_ok(["sessions", "list", "--all"], workdir, home).stdout
