"""What each answer of the shell's permission question covers and where it is kept, typed into
the real shell in a pty: "for this session" on an edit covers the file's folder, not one file; a
`bash` question offers the command's prefix (`Bash(touch:*)`) as well as the exact command, a
prefix for each part of a compound command and none for a destructive program; session answers
live in memory only, "don't ask again" ones in `.commandcode/settings.local.json`, where they
parse under the strict rule parser and hold in the next session."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from helpers.cli import wait_for
from helpers.terminal import HANG_TIMEOUT, ShellSession, shell_session

pytestmark = pytest.mark.terminal


def _call(tool: str, **arguments: str) -> str:
    return f"call {tool} {json.dumps(arguments)}"


def _ask(shell: ShellSession, call: str, question: str) -> str:
    """Sends `call` and waits for its own question, whole (down to the `choice [` line; earlier
    questions of the same text are told apart in the raw output); returns the screen from it on."""
    wanted = question.encode()
    before = shell.raw.count(wanted)
    shell.line(call)
    deadline = time.monotonic() + HANG_TIMEOUT
    while shell.raw.count(wanted) <= before or b"choice [" not in shell.raw.rsplit(wanted, 1)[1]:
        if time.monotonic() > deadline:
            raise AssertionError(f"the question {question!r} never came whole:\n{shell.text()}")
        shell.pump()
    return question + shell.text().rsplit(question, 1)[1]


def _saved(workdir: Path) -> list[str]:
    settings = workdir / ".commandcode" / "settings.local.json"
    if not settings.exists():
        return []
    rules: list[str] = json.loads(settings.read_text())["permissions"]["allow"]
    return rules


def test_session_and_saved_answers_cover_a_folder_a_prefix_or_the_exact_command(home: Path, workdir: Path) -> None:
    for folder in ("src", "other"):
        (workdir / folder).mkdir()
        (workdir / folder / "f.txt").write_text("old\n")
    (workdir / "src" / "g.txt").write_text("old\n")
    shell = shell_session(workdir, home, columns=160)
    # an edit: "for this session" covers its folder (src/), and nothing is written to a file
    screen = _ask(shell, _call("edit_file", file_path="src/f.txt", old_string="old", new_string="new"), "Allow edit_file")
    assert "2. Yes, allow all edits in src/ for this session" in screen, screen
    shell.send("2")
    wait_for(lambda: (workdir / "src" / "f.txt").read_text() == "new\n", what="the allowed edit")
    shell.line(_call("edit_file", file_path="src/g.txt", old_string="old", new_string="new"))
    wait_for(lambda: (workdir / "src" / "g.txt").read_text() == "new\n", what="the second edit in src/, unasked")
    assert shell.text().count("Allow edit_file") == 1, shell.text()
    _ask(shell, _call("edit_file", file_path="other/f.txt", old_string="old", new_string="new"), "Allow edit_file /")  # another folder is asked about
    assert "other/f.txt" in shell.text()
    shell.send("n")
    shell.wait_screen("the user denied")
    assert (workdir / "other" / "f.txt").read_text() == "old\n"
    assert _saved(workdir) == []
    # a command: its prefix for this session; the next `touch` runs unasked
    screen = _ask(shell, _call("bash", command="touch one.txt"), "Allow bash: touch one.txt?")
    assert "2. Yes, allow `touch:*` for this session" in screen, screen
    assert "3. Yes, allow this exact command for this session" in screen, screen
    assert "4. Yes, and don't ask again for `touch:*` (saved in .commandcode/settings.local.json)" in screen, screen
    assert "5. Yes, and don't ask again for this exact command" in screen and "6. No" in screen, screen
    shell.send("2")
    wait_for(lambda: (workdir / "one.txt").exists(), what="the allowed command")
    shell.line(_call("bash", command="touch two.txt"))
    wait_for(lambda: (workdir / "two.txt").exists(), what="the prefix to allow another touch")
    assert "Allow bash: touch two.txt" not in shell.text()
    # the exact command for this session: `ls -a` again runs unasked, `ls -l` is asked
    _ask(shell, _call("bash", command="ls -a > la.txt"), "Allow bash: ls -a > la.txt?")
    shell.send("3")
    wait_for(lambda: (workdir / "la.txt").exists(), what="ls -a")
    (workdir / "la.txt").unlink()
    shell.line(_call("bash", command="ls -a > la.txt"))
    wait_for(lambda: (workdir / "la.txt").exists(), what="the same exact command, unasked")
    screen = _ask(shell, _call("bash", command="ls -l > la.txt"), "Allow bash: ls -l > la.txt?")
    shell.send("n")
    shell.wait_screen("the user denied bash: ls -l")
    # a compound command: one prefix per part; a destructive program gets no prefix, only its exact command
    screen = _ask(shell, _call("bash", command="mkdir d1 && cat one.txt && rm -r d1"), "Allow bash: mkdir d1")
    assert "allow `mkdir:*`, `cat:*`, `rm -r d1` for this session" in screen, screen
    assert "rm:*" not in screen and "rm -r:*" not in screen, screen
    shell.send("n")
    shell.wait_screen("the user denied bash: mkdir")
    assert _saved(workdir) == []  # nothing so far was saved
    # don't ask again: the prefix, then an exact command, written to settings.local.json
    _ask(shell, _call("bash", command="mkdir d2"), "Allow bash: mkdir d2?")
    shell.send("4")
    wait_for(lambda: (workdir / "d2").is_dir(), what="mkdir d2")
    wait_for(lambda: _saved(workdir) == ["Bash(mkdir:*)"], what="the saved prefix rule")
    _ask(shell, _call("bash", command="cp one.txt three.txt"), "Allow bash: cp one.txt three.txt?")
    shell.send("5")
    wait_for(lambda: (workdir / "three.txt").exists(), what="cp")
    wait_for(lambda: _saved(workdir) == ["Bash(mkdir:*)", "Bash(cp one.txt three.txt)"], what="the exact rule")
    # an edit's don't-ask-again: its folder, from the project root
    _ask(shell, _call("edit_file", file_path="other/f.txt", old_string="old", new_string="new"), "Allow edit_file")
    shell.send("3")
    wait_for(lambda: (workdir / "other" / "f.txt").read_text() == "new\n", what="the edit in other/")
    wait_for(lambda: len(_saved(workdir)) == 3, what="the saved folder rule")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    from commandcode.agent.permissions import parse_rules

    saved = _saved(workdir)
    assert saved[2] == "Edit(/other/**)", saved
    assert [rule.text for rule in parse_rules([(rule, "settings.local.json") for rule in saved], "allow")] == saved
    # the next session: the saved rules hold, the session ones are gone
    again = shell_session(workdir, home, ["-c"], columns=160)
    again.line(_call("bash", command="mkdir d3"))
    wait_for(lambda: (workdir / "d3").is_dir(), what="the saved prefix to allow mkdir unasked")
    _ask(again, _call("bash", command="touch four.txt"), "Allow bash: touch four.txt?")
    again.send("n")
    again.wait_screen("the user denied bash: touch")
    assert "Allow bash: mkdir" not in again.text()
    again.line("/exit")
    assert again.wait_exit() == 0


def test_a_question_an_ask_rule_raises_offers_only_once_or_no(home: Path, workdir: Path) -> None:
    """Remembering an answer the ask rule overrides would change nothing: the prompt does not offer it."""
    (workdir / ".commandcode").mkdir()
    (workdir / ".commandcode" / "settings.json").write_text(json.dumps({"permissions": {"ask": ["Bash(touch:*)"]}}))
    shell = shell_session(workdir, home, columns=160)
    screen = _ask(shell, _call("bash", command="touch a.txt"), "Allow bash: touch a.txt?")
    assert "1. Yes, once" in screen and "2. No" in screen and "for this session" not in screen, screen
    shell.send("1")
    wait_for(lambda: (workdir / "a.txt").exists(), what="the command allowed once")
    shell.line("/exit")
    assert shell.wait_exit() == 0
