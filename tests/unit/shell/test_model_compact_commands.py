"""`/model`, `/effort`, `/compact` and `/compact-mode` against a fake `Shell` and a real session:
they call `AgentSession.set_model`, `set_effort`, `compact` and `compact_mode` (branch `agent`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.errors import CommandcodeError, UsageError
from commandcode.shell.slash import registry
from helpers.cli import entries, only_transcript, read_meta_file
from helpers.fake_shell import FakeShell
from helpers.fake_shell import run_line as run


def test_model_shows_and_refuses_an_unknown_model(shell: FakeShell) -> None:
    run(shell, "/model")
    assert shell.lines[-1] == "model: commandcode/offline"
    with pytest.raises(CommandcodeError):
        run(shell, "/model nowhere/nothing")
    assert shell.agent.models.model.model_id == "commandcode/offline"


def test_model_switch_writes_a_model_change(shell: FakeShell, home: Path, workdir: Path) -> None:
    shell.agent.turns.run_turn("first")
    run(shell, "/model offline")
    assert shell.notices[-1] == "model: commandcode/offline"
    shell.agent.turns.run_turn("second")
    assert any(entry["type"] == "model_change" for entry in entries(only_transcript(home, workdir)))


def test_effort_shows_and_refuses_a_level_the_model_lacks(shell: FakeShell) -> None:
    run(shell, "/effort")
    assert shell.lines[-1].startswith("effort: ")
    with pytest.raises(CommandcodeError):
        run(shell, "/effort extreme")


def test_compact_mode(shell: FakeShell) -> None:
    run(shell, "/compact-mode fast")
    assert shell.agent.compaction.mode == "fast"
    run(shell, "/compact-mode")
    assert shell.lines[-1] == "compact mode: fast"
    with pytest.raises(UsageError, match="unknown compact mode"):
        run(shell, "/compact-mode sometimes")
    assert registry()["compact-mode"].complete(shell, "f") == ["fast", "full"]  # type: ignore[misc]


def test_compact_reports_this_and_total_savings(shell: FakeShell, home: Path, workdir: Path) -> None:
    for number in range(8):
        shell.agent.turns.run_turn(f"turn {number} " + "words " * 4000)
    run(shell, "/compact keep the decisions")
    assert shell.notices[-1].startswith("compacted: ")
    transcript = only_transcript(home, workdir)
    assert any(entry["type"] == "compaction" for entry in entries(transcript))
    assert read_meta_file(transcript)["compaction"]["count"] == 1
