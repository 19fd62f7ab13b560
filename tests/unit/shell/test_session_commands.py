"""The shell's own slash commands run against a fake `Shell` and a real session in the test's
data dir: what they print, what they refuse (one `CommandcodeError` line), what they write."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.errors import CommandcodeError, SettingsError, UsageError
from commandcode.shell.slash import registry
from helpers.cli import entries, only_transcript, read_meta_file
from helpers.fake_shell import FakeShell
from helpers.fake_shell import run_line as run


def test_every_command_of_the_issue_is_registered_with_help() -> None:
    commands = registry()
    for name in ("help", "exit", "quit", "clear", "new", "rename", "name", "session-file", "status", "trace", "config",
                 "expand"):
        assert name in commands and commands[name].help.strip(), name
    assert commands["quit"] is commands["exit"] and commands["new"] is commands["clear"]


def test_help(shell: FakeShell) -> None:
    run(shell, "/help")
    assert "/clear (/new)" in shell.lines[-1] and "/exit (/quit)" in shell.lines[-1]
    run(shell, "/help /status")
    assert shell.lines[-1].startswith("/status\n")
    with pytest.raises(UsageError, match="no command /statsu") as refused:
        run(shell, "/help statsu")
    assert refused.value.hint == "did you mean /status?"
    assert registry()["help"].complete(shell, "se") == ["session-file", "sessions"]  # type: ignore[misc]


def test_exit_and_expand(shell: FakeShell) -> None:
    run(shell, "/quit")
    assert shell.exited
    run(shell, "/expand")
    run(shell, "/expand #2")
    assert shell.expanded == [3, 2]
    with pytest.raises(UsageError):
        run(shell, "/expand last")
    assert registry()["expand"].complete(shell, "") == ["3", "2", "1"]  # type: ignore[misc]


def test_rename_and_name(shell: FakeShell, home: Path, workdir: Path) -> None:
    run(shell, "/name")
    assert shell.lines[-1].startswith("(unnamed")
    run(shell, "/rename  My Work ")
    assert shell.titles == ["My Work"] and "saved with the first reply" in shell.notices[-1]
    shell.agent.turns.run_turn("first prompt here")
    transcript = only_transcript(home, workdir)
    assert read_meta_file(transcript)["title"] == "My Work"
    run(shell, "/name Renamed Again")
    assert entries(transcript)[-1] == {**entries(transcript)[-1], "type": "session_info", "name": "Renamed Again"}
    assert read_meta_file(transcript)["title"] == "Renamed Again"
    run(shell, "/name")
    assert shell.lines[-1] == "Renamed Again"
    run(shell, "/rename")  # bare, on a named session: the name stays (it replaced it with the first prompt)
    assert shell.titles[-1] == "Renamed Again" and read_meta_file(transcript)["title"] == "Renamed Again"
    assert shell.notices[-1] == "the session is named 'Renamed Again'; /rename NAME renames it"
    with pytest.raises(UsageError, match="empty"):
        shell.agent.rename("   ")


def test_rename_refuses_a_name_another_session_has(shell: FakeShell, workdir: Path) -> None:
    with AgentSession.start(workdir) as other:
        other.rename("Taken")
        other.turns.run_turn("x")
    with pytest.raises(CommandcodeError, match="is taken by session"):
        run(shell, "/rename TAKEN")
    assert shell.titles == []


def test_session_file_before_and_after_the_first_save(shell: FakeShell, home: Path, workdir: Path) -> None:
    run(shell, "/session-file")
    assert shell.lines[-1].startswith(f"{shell.agent.session_id} (not created yet")
    shell.agent.turns.run_turn("save")
    run(shell, "/session-file")
    assert shell.lines[-1] == f"{shell.agent.session_id} <link {only_transcript(home, workdir)}>"


def test_status_and_trace(shell: FakeShell) -> None:
    with pytest.raises(CommandcodeError, match="no turn has run"):
        run(shell, "/trace")
    shell.agent.turns.run_turn("one")
    run(shell, "/status")
    status = shell.lines[-1]
    assert re.search(r"^context\s+\d+ tokens, [\d.]+% of 200,000$", status, re.M), status
    assert re.search(r"^checkpoints\s+1 checkpoint\(s\)", status, re.M)
    run(shell, "/trace")
    assert len(shell.copied) == 1 and re.fullmatch(r"[0-9a-f]{32}", shell.copied[0])
    assert shell.lines[-1] == f"trace id {shell.copied[0]}" and shell.copied[0] == shell.agent.turns.trace_id


def test_clear_keeps_the_previous_session_resumable(shell: FakeShell, workdir: Path) -> None:
    run(shell, "/clear")
    assert shell.previous_session_id is None and "nothing saved" in shell.notices[-1]
    shell.agent.turns.run_turn("saved one")
    first = shell.agent.session_id
    run(shell, "/new")
    assert shell.previous_session_id == first and shell.agent.session_id != first
    assert f"commandcode -r {first}" in shell.notices[-1]
    with AgentSession.start(workdir, reference=first) as again:  # resumable, and no longer locked
        again.turns.run_turn("back")


def test_config_shows_and_sets(shell: FakeShell, home: Path, workdir: Path) -> None:
    run(shell, "/config")
    assert "Settings files (later ones win):" in shell.lines[-1] and "(none set)" in shell.lines[-1]
    run(shell, "/config set cleanupPeriodDays 7")
    run(shell, "/config set --local statusLine {\"type\": \"command\", \"command\": \"echo hi\"}")
    run(shell, "/config set --project note plain text")
    assert json.loads((home / "settings.json").read_text()) == {"cleanupPeriodDays": 7}
    assert json.loads((workdir / ".commandcode" / "settings.local.json").read_text())["statusLine"]["command"] == "echo hi"
    assert json.loads((workdir / ".commandcode" / "settings.json").read_text()) == {"note": "plain text"}
    run(shell, "/config cleanupPeriodDays")
    assert shell.lines[-1].startswith("cleanupPeriodDays = 7  (from user")
    run(shell, "/config nothing.here")
    assert "is not set" in shell.lines[-1]
    with pytest.raises(UsageError, match="needs a key and a value"):
        run(shell, "/config set --user onlykey")
    for bad, message in (('permissions.deny Bash(rm:*)', "takes a list of rules"),
                         ('permissions.deny ["Bash(rm:*"]', re.escape('the rule "Bash(rm:*" does not parse'))):
        with pytest.raises(UsageError, match=message):
            run(shell, f"/config set --local {bad}")
    assert "permissions" not in json.loads((workdir / ".commandcode" / "settings.local.json").read_text())
    run(shell, '/config set --local permissions.deny ["Bash(rm:*)"]')
    assert json.loads((workdir / ".commandcode" / "settings.local.json").read_text())["permissions"]["deny"] == ["Bash(rm:*)"]
    (home / "settings.json").write_text("{oops")
    with pytest.raises(SettingsError, match=r"settings.json:1:"):
        run(shell, "/config set cleanupPeriodDays 8")
    assert (home / "settings.json").read_text() == "{oops"
    assert "set --local " in registry()["config"].complete(shell, "set --l")  # type: ignore[misc]
