"""`/tree` inside the running shell, through a real pseudo-terminal (pexpect + pyte), talking to a
real HTTP model (the stub OpenAI-compatible server): the navigator opens over the shell, a search
finds the first answer, Enter jumps there (the summary skipped), and the next prompt's request
carries the context of the new leaf: the branch left behind is gone from what the model sees,
and the turn is saved as a child of the entry jumped to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from commandcode.sessions.reader import open_session
from helpers.cli import only_transcript
from helpers.terminal import ENTER, TAB, shell_session

pytestmark = pytest.mark.terminal


def _said(messages: list[dict[str, Any]], role: str) -> list[str]:
    found = []
    for message in messages:
        if message.get("role") != role:
            continue
        content = message.get("content")
        texts = [content] if isinstance(content, str) else [str(part.get("text", "")) for part in content or []
                                                              if isinstance(part, dict) and part.get("type") == "text"]
        found.append(" ".join(text for text in texts if not text.lstrip().startswith("<system-reminder>")).strip())
    return [text for text in found if text]


def test_tree_jump_in_the_shell_moves_the_leaf_for_the_next_turn(home: Path, workdir: Path, openai_stub: Any) -> None:
    shell = shell_session(workdir, home, ["--model", "local/stub-model"])
    try:
        shell.exchange("first prompt", "You said: first prompt")
        shell.wait_prompt()
        shell.exchange("second prompt", "You said: second prompt")
        shell.wait_prompt()
        shell.line("/tree")
        shell.wait_screen("Jump")
        shell.wait_screen("filter: default", "first prompt", "second prompt")
        shell.send("/")
        shell.wait_screen("Search for")
        shell.send("You said: first")
        shell.send(ENTER)
        shell.wait_screen("match")
        shell.send(ENTER)  # jump to the first answer
        shell.wait_screen("Summarize them?")
        shell.send(TAB)  # from "Keep summary" to "Skip summary"
        shell.send(ENTER)
        shell.wait_screen("moved to entry")  # back in the shell, the notice of the jump
        shell.wait_prompt()
        before = len(openai_stub.requests)
        shell.exchange("third prompt", "You said: third prompt")
        shell.wait_prompt()
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    requests = openai_stub.requests[before:]
    assert len(requests) == 1
    messages = requests[0].body["messages"]
    assert _said(messages, "user") == ["first prompt", "third prompt"]
    assert _said(messages, "assistant") == ["Hello from stub. You said: first prompt"]
    session = open_session(only_transcript(home, workdir))
    path = [entry for entry in session.read_entries(session.path_ids()) if entry["type"] == "message"]
    texts = [" ".join(block.get("text", "") for block in entry["message"]["content"]) for entry in path]
    assert texts == ["first prompt", "Hello from stub. You said: first prompt", "third prompt",
                     "Hello from stub. You said: third prompt"]
    everything = [entry for entry in session.entries() if entry["type"] == "message"]
    assert len(everything) == 6  # the branch left behind is still in the file, only off the path
