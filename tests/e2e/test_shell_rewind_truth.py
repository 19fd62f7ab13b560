"""The rewind menu says what happens (issue 31), through the real shell in a pty: a redo says
which checkpoints the conversation holds again; after turns made since a rewind there is no redo
(it would overwrite them) and the menu says so instead of offering one; checkpoints a compaction
has passed offer no summary, in the menu and in `checkpoints list --json` (55fdfa8 offered them,
then failed with "entry … is not in the current context")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import entries, run_json, transcripts
from helpers.terminal import CTRL_C, ESC, ShellSession, shell_session

pytestmark = pytest.mark.terminal

DOWN = "\x1b[B"


def _rewind_conversation(shell: ShellSession, downs: int, number: int) -> None:
    """/rewind → the row `downs` below the newest → "Restore conversation only" → yes."""
    shell.line("/rewind")
    shell.wait_screen("Enter: choose what to restore")
    for _ in range(downs):
        shell.send(DOWN)
    shell.send("\r")
    shell.wait_screen(f"Checkpoint {number}:")
    shell.send("\r")  # no code changed: the first action is "Restore conversation only"
    shell.wait_screen("Yes, restore")
    shell.send("\r")
    shell.wait_screen(f"Rewound to checkpoint {number}")
    shell.send(CTRL_C)  # the rewound prompt is back in the input box: cleared
    shell.wait_prompt()


def test_a_redo_says_what_came_back(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=200)
    for prompt in ("alpha", "bravo", "charlie", "delta"):
        shell.exchange(prompt, f"You said: {prompt}")
    _rewind_conversation(shell, 2, 2)
    shell.wait_screen(" · 1 checkpoint(s)")
    shell.line("/rewind")
    shell.wait_screen("Redo: undo the last rewind")
    shell.send("\r")
    shell.wait_screen("Yes, redo")
    shell.send("\r")
    shell.wait_words("Undid the rewind to checkpoint 2: the conversation is back where it was before it, with "
                     "checkpoints 2–4 in it again; 0 file(s) put back as they were before that rewind")
    shell.wait_screen(" · 4 checkpoint(s)")
    shell.line("/exit")
    assert shell.wait_exit() == 0


def test_after_turns_made_since_a_rewind_the_menu_says_why_there_is_no_redo(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=200)
    for prompt in ("alpha", "bravo", "charlie", "delta"):
        shell.exchange(prompt, f"You said: {prompt}")
    _rewind_conversation(shell, 2, 2)
    shell.exchange("echo", "You said: echo")
    [transcript] = transcripts(home)
    before = transcript.read_bytes()
    shell.line("/rewind")
    screen = shell.wait_screen("Enter: choose what to restore",
                               "No redo: 1 turn(s) were made since the rewind to checkpoint 2")
    assert "Redo: undo the last rewind" not in screen
    shell.send(DOWN)
    shell.send(DOWN)  # the last row: the newest checkpoint stays the preselected one
    shell.send("\r")
    screen = shell.wait_screen("To go back, rewind to a checkpoint instead.")
    preview = " ".join(line.rsplit("│", 1)[1].strip() for line in screen.splitlines() if "│" in line)
    assert "Cannot redo: 1 turn(s) were made since the rewind to checkpoint 2, and a redo would overwrite their " \
           "edits; nothing was changed" in " ".join(preview.split()), preview
    shell.send(ESC)
    shell.wait_screen("Rewind cancelled; nothing was changed")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert transcript.read_bytes() == before  # nothing moved: the turn made since stays where it is
    context: Any = run_json(["sessions", "context", transcript.stem, "--json"], workdir, home)
    said = [block.get("text") for message in context["messages"] for block in message["content"]]
    assert "echo" in said and "bravo" not in said


def test_checkpoints_a_compaction_passed_offer_no_summary(home: Path, workdir: Path) -> None:
    """Eight turns, /compact (the project's 3,000-token window keeps a third), a ninth turn:
    checkpoints 1-8 offer no summary anywhere; the ninth, after the compaction, does."""
    settings = workdir / ".commandcode" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"contextWindow": 3000}))
    shell = shell_session(workdir, home, columns=200)
    filler = " ".join(["words"] * 80)
    for number in range(1, 9):
        shell.exchange(f"turn {number} {filler}", f"You said: turn {number}")
    shell.exchange("/compact", "compacted:")
    shell.exchange("turn 9", "You said: turn 9")
    shell.line("/rewind")
    shell.wait_screen("Enter: choose what to restore")
    shell.send(DOWN)
    shell.send("\r")
    screen = shell.wait_screen("Checkpoint 8:")
    shell.wait_screen("Restore conversation only")
    screen = shell.text()
    assert "Summarize" not in screen, screen
    shell.send(ESC)  # back to the rows
    shell.send(ESC)
    shell.wait_screen("Rewind cancelled")
    shell.line("/rewind")
    shell.wait_screen("Enter: choose what to restore")
    shell.send("\r")
    shell.wait_screen("Checkpoint 9:")
    shell.wait_screen("Summarize from here")
    shell.send(ESC)
    shell.send(ESC)
    shell.wait_screen("Rewind cancelled")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    [transcript] = transcripts(home)
    assert any(entry["type"] == "compaction" for entry in entries(transcript))
    listed: Any = run_json(["checkpoints", "list", transcript.stem, "--json"], workdir, home)
    modes = {row["number"]: row["modes"] for row in listed["checkpoints"]}
    assert sorted(modes) == list(range(1, 10)), modes
    for number in range(1, 9):
        assert not any(mode.startswith("summarize") for mode in modes[number]), (number, modes[number])
    assert "summarize-from" in modes[9]
