"""`/agents` through the real shell in a pseudo-terminal: create an agent with the questions
answered by keys, see it listed and shown, and a second create of the same name refused with
one `error:` line (before any question) while the file stays as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.terminal import shell_session

pytestmark = pytest.mark.terminal


def test_agents_new_list_show_and_refused_overwrite(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=200)
    shell.line("/agents new reviewer")
    shell.wait_screen("Description of reviewer")
    shell.line("Reviews diffs for bugs")
    shell.wait_screen("  5. No tools")
    shell.send("2")  # read-only tools
    shell.wait_screen("System prompt")
    shell.line("")  # the offered prompt
    path = workdir / ".commandcode" / "agents" / "reviewer.md"
    shell.wait_screen(f"Created agent reviewer: {path}")
    text = path.read_text(encoding="utf-8")
    assert text.startswith('---\nname: reviewer\ndescription: "Reviews diffs for bugs"\n'
                           "tools: read_file, read_directory, grep, glob\n---\n"), text
    shell.wait_prompt()
    shell.exchange("/agents", "Default agents (read-only)", "Agents (1 custom)", "reviewer  Reviews diffs for bugs",
                   str(path))
    shell.wait_prompt()
    screen = shell.exchange("/agents reviewer", "You are a focused assistant.")
    assert "tools: read_file, read_directory, grep, glob" in screen
    shell.wait_prompt()
    screen = shell.exchange("/agents new reviewer", "exists: not overwritten")  # before any question
    assert "error: " in screen and "Traceback" not in screen
    assert path.read_text(encoding="utf-8") == text
    shell.wait_prompt()
    shell.line("/exit")
    assert shell.wait_exit() == 0
