"""Interrupting keeps what was said (issue 31), through the real shell in a pty: Esc during a
streamed reply keeps the prompt and the text so far in the transcript, then the real CLI's
`Interrupted by user` marker, all in one commit; the next request tells the model; a `bash` call
Esc stopped keeps its output with a result that says so; the interrupted turn's checkpoint is
one a rewind can use (its edits restored, its prompt back in the input box), and every count
(status line, `sessions status`, `checkpoints list`) is of the checkpoints a user can rewind to.
On 55fdfa8 the turn was dropped ("nothing of this turn was saved") and its checkpoint stayed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers.cli import entries, run_json, transcripts
from helpers.openai_stub import OpenAIStub, text
from helpers.terminal import ALT_ENTER, CTRL_C, ESC, shell_session

pytestmark = pytest.mark.terminal

MARKER = "Interrupted by user"


def _messages(transcript: Path) -> list[tuple[str, str]]:
    """(role, text of its text and tool_result blocks) of every message entry, in file order."""
    out = []
    for entry in entries(transcript):
        if entry["type"] != "message":
            continue
        parts = []
        for block in entry["message"]["content"]:
            if block.get("type") == "text":
                parts.append(block["text"])
            elif block.get("type") == "tool_result":
                parts.append("".join(item.get("text", "") for item in block["content"]))
        out.append((entry["message"]["role"], "\n".join(parts)))
    return out


def _context(home: Path, workdir: Path, sid: str) -> list[tuple[str, str]]:
    value: Any = run_json(["sessions", "context", sid, "--json"], workdir, home)
    messages = value["messages"] if isinstance(value, dict) else value
    return [(message["role"], "".join(block.get("text", "") for block in message["content"]
                                      if isinstance(block, dict))) for message in messages]


def _counts(home: Path, workdir: Path, sid: str) -> tuple[int, int]:
    status: Any = run_json(["sessions", "status", sid, "--json"], workdir, home)
    listed: Any = run_json(["checkpoints", "list", sid, "--json"], workdir, home)
    return status["checkpoints"]["count"], len(listed["checkpoints"])


def test_esc_mid_stream_keeps_the_partial_reply_and_the_next_request_says_so(openai_stub: OpenAIStub, home: Path,
                                                                           workdir: Path) -> None:
    reply = text("The first half of a reply, ", "the second half.", usage=(30, 9, 0))
    reply.hang_after_first_chunk = True
    openai_stub.reply(reply)
    shell = shell_session(workdir, home, ["--model", "local/stub-model"], columns=160)
    shell.exchange("explain it", "The first half of a reply,")
    shell.send(ESC)
    screen = shell.wait_screen("Interrupted · what was said so far is kept")
    assert "nothing of this turn was saved" not in screen
    [transcript] = transcripts(home)
    said = _messages(transcript)
    assert said == [("user", "explain it"), ("assistant", "The first half of a reply, "), ("user", MARKER)], said
    cut = [entry for entry in entries(transcript) if entry["type"] == "message"][1]
    assert "usage" not in cut  # no usage was reported for a cut reply: none is made up
    shell.exchange("go on", "Hello from stub. You said: go on")
    sent = openai_stub.requests[-1].body["messages"]
    texts = [(message["role"], message["content"] if isinstance(message["content"], str) else
              "".join(part.get("text", "") for part in message["content"])) for message in sent
             if message["role"] != "system"]
    assert texts[:3] == [("user", "explain it"), ("assistant", "The first half of a reply, "), ("user", MARKER)], texts
    assert texts[-1] == ("user", "go on")
    shell.wait_screen(" · 2 checkpoint(s)")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert _counts(home, workdir, transcript.stem) == (2, 2)


def test_esc_on_the_offline_stream_keeps_it_and_a_resume_shows_it_interrupted(home: Path, workdir: Path) -> None:
    """A new session whose first turn is interrupted is saved (the prompt is the user's; the
    real CLI keeps a failed first turn too), and its resume recap marks the exchange."""
    shell = shell_session(workdir, home, columns=160, COMMANDCODE_OFFLINE_TOKEN_MS="300")
    shell.wait_prompt()
    shell.line("stop me")
    shell.wait_screen("Offl")
    shell.send(ESC)
    shell.wait_screen("Interrupted · what was said so far is kept")
    shell.pump(1.0)  # the stream really stopped: nothing more of the reply arrives
    assert "You said: stop me" not in shell.text()
    shell.line("/exit")
    assert shell.wait_exit() == 0
    [transcript] = transcripts(home)
    said = _messages(transcript)
    assert said[0] == ("user", "stop me") and said[-1] == ("user", MARKER), said
    assert said[1][0] == "assistant" and said[1][1].startswith("Offl") and "stop me" not in said[1][1], said
    again = shell_session(workdir, home, ["-c"], columns=160)
    screen = again.wait_screen("> stop me", "(interrupted)")
    assert "(interrupted)" in screen.split("> stop me", 1)[1], screen
    again.line("/exit")
    assert again.wait_exit() == 0


def test_esc_during_bash_keeps_the_call_its_output_and_a_usable_checkpoint(home: Path, workdir: Path) -> None:
    """The call keeps a result (its output so far, and that it was stopped): no dangling tool
    call is left for a context builder to repair. The turn's checkpoint is one a rewind can use:
    code and conversation go back to just before it, its edit undone, its prompt in the input
    box; the rewound turn stays in the file on a side branch."""
    (workdir / "notes.txt").write_text("original\n")
    shell = shell_session(workdir, home, ["--yolo"], columns=200)
    shell.exchange("a first turn", "You said: a first turn")
    marker = workdir / "started"
    shell.send('call write_file {"file_path": "notes.txt", "content": "edited\\n"}')
    shell.send(ALT_ENTER)
    shell.line(f'call bash {{"command": "echo partial-output; touch {marker}; sleep 300"}}')
    shell.interrupt_once(marker)
    assert (workdir / "notes.txt").read_text() == "edited\n"
    [transcript] = transcripts(home)
    said = _messages(transcript)
    assert said[-1] == ("user", MARKER), said
    assert said[-2][0] == "user" and said[-2][1].startswith("partial-output\n") and "stopped" in said[-2][1], said
    calls = [block for entry in entries(transcript) if entry["type"] == "message"
             for block in entry["message"]["content"] if block.get("type") == "tool_use"]
    results = {block["tool_use_id"] for entry in entries(transcript) if entry["type"] == "message"
               for block in entry["message"]["content"] if block.get("type") == "tool_result"}
    assert {call["id"] for call in calls} == results  # every call has its result
    shell.wait_screen(" · 2 checkpoint(s)")
    assert _counts(home, workdir, transcript.stem) == (2, 2)
    shell.line("/rewind")
    shell.wait_screen("Enter: choose what to restore")
    shell.send("\r")  # the newest checkpoint: the interrupted turn
    shell.wait_screen("Restore code and conversation")
    shell.send("\r")
    shell.wait_screen("Yes, restore")
    shell.send("\r")
    shell.wait_screen("Rewound to checkpoint 2")
    shell.wait_screen('> call write_file {"file_path"')  # its prompt is back in the input box
    shell.send(CTRL_C)
    shell.wait_prompt()
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert (workdir / "notes.txt").read_text() == "original\n"
    context = _context(home, workdir, transcript.stem)
    assert [text_ for role, text_ in context if role == "user"] == ["a first turn"], context
    assert any(text_.startswith("call write_file") for _, text_ in _messages(transcript))  # kept on its branch


def test_every_count_is_of_checkpoints_a_rewind_can_use(home: Path, workdir: Path) -> None:
    """Three turns, the middle one interrupted: the status line, `sessions status`,
    `checkpoints list` and the rewind menu all say 3, one per prompt in the conversation."""
    shell = shell_session(workdir, home, ["--yolo"], columns=200)
    shell.exchange("alpha", "You said: alpha")
    shell.exchange('call bash {"command": "sleep 300"}', "running — Esc interrupts")
    shell.send(ESC)
    shell.wait_screen("Interrupted · what was said so far is kept")
    shell.exchange("charlie", "You said: charlie")
    shell.wait_screen(" · 3 checkpoint(s)")
    shell.line("/rewind")
    # the menu's rows, all of them: its frame can arrive in pieces
    shell.wait_screen("Enter: choose what to restore", "alpha", 'call bash {"command": "sleep 300"}', "charlie")
    shell.send(ESC)
    shell.wait_screen("Rewind cancelled")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    [transcript] = transcripts(home)
    prompts = [text_ for role, text_ in _context(home, workdir, transcript.stem)
               if role == "user" and text_ in ("alpha", 'call bash {"command": "sleep 300"}', "charlie")]
    assert len(prompts) == 3 and _counts(home, workdir, transcript.stem) == (3, 3)
    listed: Any = run_json(["checkpoints", "list", transcript.stem, "--json"], workdir, home)
    assert [row["prompt"] for row in listed["checkpoints"]] == prompts
