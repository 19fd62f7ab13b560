"""`/fork` (alias `/branch`), `/clone` and `/tree` against a small fake `Shell`: the copy is made,
the shell switches into it keeping grants, and refusals raise one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.errors import CommandcodeError
from commandcode.shell.slash import registry
from commandcode.ui.screens.tree import TreeScreen
from helpers.trees import branched_session


class FakeShell:
    def __init__(self, agent: AgentSession, cwd: Path, screen_result: Any = None) -> None:
        self.cwd, self.agent, self.previous_session_id = cwd, agent, None
        self.switches: list[tuple[AgentSession, bool]] = []
        self.notices: list[str] = []
        self.screens: list[Any] = []
        self.screen_result = screen_result
        from commandcode.config.context import ProjectContext

        self.project = ProjectContext(cwd)  # the shell's context (the tree's branchSummary setting)

    def switch_to(self, agent: AgentSession, *, keep_grants: bool = True) -> None:
        self.switches.append((agent, keep_grants))
        self.agent = agent

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def run_screen(self, screen: Any) -> Any:
        self.screens.append(screen)
        return self.screen_result


def _run(shell: FakeShell, line: str) -> None:
    name, _, args = line.lstrip("/").partition(" ")
    registry()[name].run(shell, args)  # type: ignore[arg-type]


def test_fork_and_branch_switch_into_a_named_fork_keeping_grants(home: Path, workdir: Path) -> None:
    files, _ids = branched_session(workdir)
    shell = FakeShell(AgentSession(files, workdir, is_new=False), workdir)
    _run(shell, "/fork payments experiment")
    (fork, keep), = shell.switches
    assert keep is True and fork.session_id != files.session_id
    assert json.loads(fork.files.meta.read_text())["title"] == "payments experiment"
    assert "payments experiment" in shell.notices[0] and files.session_id in shell.notices[0]
    _run(shell, "/branch")  # the alias forks the session the shell is now in
    assert json.loads(shell.agent.files.meta.read_text())["parentSessionId"] == fork.session_id
    with pytest.raises(CommandcodeError, match="taken"):
        _run(shell, "/fork PAYMENTS experiment")


def test_clone_switches_into_the_clone(home: Path, workdir: Path) -> None:
    files, _ids = branched_session(workdir)
    shell = FakeShell(AgentSession(files, workdir, is_new=False), workdir)
    _run(shell, "/clone")
    assert shell.agent.session_id != files.session_id and not shell.agent.files.checkpoints.exists()
    with pytest.raises(CommandcodeError, match="no arguments"):
        _run(shell, "/clone name")


def test_fork_and_tree_before_anything_is_saved_are_refused(home: Path, workdir: Path) -> None:
    shell = FakeShell(AgentSession.start(workdir), workdir)
    with pytest.raises(CommandcodeError, match="nothing to fork"):
        _run(shell, "/fork")
    with pytest.raises(CommandcodeError, match="no tree yet"):
        _run(shell, "/tree")
    assert shell.switches == [] and shell.screens == []


def test_tree_opens_the_navigator_and_says_what_changed(home: Path, workdir: Path) -> None:
    files, _ids = branched_session(workdir)
    shell = FakeShell(AgentSession(files, workdir, is_new=False), workdir, screen_result="moved to entry x")
    _run(shell, "/tree")
    assert isinstance(shell.screens[0], TreeScreen) and shell.notices == ["moved to entry x"]
