"""`/worktree` and `/worktrees` through a small fake shell, against a real repository."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.errors import CommandcodeError
from commandcode.shell.slash import registry
from helpers.workspace import git_repo


class FakeShell:
    def __init__(self, cwd: Path) -> None:
        self._cwd = cwd
        self._agent = AgentSession.start(cwd)
        self.printed: list[str] = []
        self.notices: list[str] = []
        self.switches = 0

    @property
    def cwd(self) -> Path:
        return self._cwd

    @property
    def agent(self) -> AgentSession:
        return self._agent

    @property
    def previous_session_id(self) -> str | None:
        return None

    def switch_to(self, agent: AgentSession, *, keep_grants: bool = True) -> None:
        self._agent, self._cwd = agent, agent.cwd
        self.switches += 1

    def print(self, text: str) -> None:
        self.printed.append(text)

    def print_markdown(self, text: str) -> None:
        self.printed.append(text)

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def confirm(self, question: str, *, default: bool = False) -> bool:
        return default

    def choose(self, question: str, options: Sequence[str], *, default: int = 0) -> int | None:
        return default

    def ask_text(self, question: str, *, default: str = "") -> str | None:
        return default

    def run_screen(self, screen: Any) -> Any:
        return None

    def copy(self, text: str) -> str:
        return "copied"

    def set_title(self, title: str) -> None:
        pass

    def exit(self) -> None:
        pass


def test_worktree_moves_into_a_new_session_there(tmp_path: Path, home: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    shell = FakeShell(repo)
    commands = registry()
    commands["worktree"].run(shell, "side-task")
    tree = repo / ".commandcode" / "worktrees" / "side-task"
    assert shell.cwd == tree and shell.switches == 1
    assert shell.agent.turns.tool_space().worktree is not None
    assert "worktree-side-task" in shell.notices[0]
    with pytest.raises(CommandcodeError, match="already works in the worktree"):
        commands["worktree"].run(shell, "")
    commands["worktree"].run(shell, "second")  # from inside a worktree: made at the main checkout
    assert shell.cwd == repo / ".commandcode" / "worktrees" / "second"
    assert commands["worktree"].complete is not None and commands["worktree"].complete(shell, "s") == ["second", "side-task"]
    commands["worktrees"].run(shell, "")
    assert any(line.startswith("side-task  worktree-side-task  clean") for line in shell.printed)
    with pytest.raises(CommandcodeError):
        commands["worktree"].run(shell, "a/b")
    with pytest.raises(CommandcodeError):
        commands["worktree"].run(shell, "two names")


def test_worktree_outside_a_repository_is_refused(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    shell = FakeShell(folder)
    with pytest.raises(CommandcodeError, match="not a git repository"):
        registry()["worktree"].run(shell, "x")
    assert shell.switches == 0 and list(folder.iterdir()) == []
