"""Lines the shell writes itself wrap at word boundaries, in a real pty at 100 columns: the resume
recap and the permission question (the terminal cut them mid-word: `repos` / `itory`); a reply
rendered by rich already did. A word longer than a row may still break."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.terminal import shell_session

pytestmark = pytest.mark.terminal
# narrow, but wide enough that the status line keeps the checkpoint count the helper waits for
COLUMNS = 100
WORDS = ("please describe the wonderful extraordinary architecture of this repository in considerable detail "
         "with particular attention to the interesting synchronization primitives")


def _cut(screen: str, text: str, width: int = COLUMNS) -> list[str]:
    """The words of `text` the screen shows cut over two rows (a full row ending in a piece of the
    word, the next row starting with the rest)."""
    words = {word.strip('?"()') for word in text.split()}
    lines = screen.split("\n")
    cut = []
    for first, second in zip(lines, lines[1:]):
        if len(first) == width and first.split() and second.split() and first[-1] != " ":
            head, tail = first.split()[-1].lstrip('"('), second.split()[0].rstrip('?")')
            if head + tail in words and head not in words:
                cut.append(f"{head}|{tail}")
    return cut


def test_recap_and_permission_question_wrap_at_words(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=COLUMNS, rows=40)
    shell.exchange(WORDS, "You said")
    command = "echo " + " ".join(WORDS.split()[3:])
    shell.exchange("call bash " + json.dumps({"command": command}), "Allow bash")
    shell.wait_screen("No")
    question = shell.text().split("Allow bash", 1)[1]  # not the typed line above it
    assert not _cut(question, command), question
    shell.send("n")
    shell.wait_screen("the user denied")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    again = shell_session(workdir, home, ["-c"], columns=COLUMNS, rows=40)
    again.wait_screen("resumed session")
    recap = again.wait_screen("replied").split("resumed session", 1)[1]
    assert not _cut(recap, WORDS), recap
    again.line("/exit")
    assert again.wait_exit() == 0
