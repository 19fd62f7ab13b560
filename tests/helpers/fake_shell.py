"""A `Shell` (shell/slash.py) that records what a command did, for slash commands' unit tests
(`FakeShell(agent)`: an entered `AgentSession`; questions are answered from `answers`; a
full-screen screen is answered by `on_screen(screen)` when set, and recorded in `screens`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from commandcode.agent.runtime import AgentSession
from commandcode.shell.slash import ShellBase


class FakeShell(ShellBase):
    """Prints into `lines`, answers questions from `answers` (asked ones kept in `questions`),
    copies into `copied`."""

    def __init__(self, agent: AgentSession, answers: Sequence[Any] = ()) -> None:
        self._agent = agent
        self.lines: list[str] = []
        self.notices: list[str] = []
        self.copied: list[str] = []
        self.titles: list[str] = []
        self.expanded: list[int] = []
        self.answers = list(answers)
        self.questions: list[str] = []
        self.exited = False
        self.on_screen: Any = None
        self.screens: list[Any] = []
        self.recaps: list[list[str]] = []  # what each show_recap printed

    @property
    def agent(self) -> AgentSession:
        return self._agent

    def switch_to(self, agent: AgentSession, *, keep_grants: bool = True) -> None:
        if not agent.is_open:
            agent.__enter__()
        old = self._agent
        old.close()
        if old.handle.exists_on_disk:
            self._previous_session_id = old.session_id
        self._agent = agent

    def print(self, text: str) -> None:
        self.lines.append(text)

    def print_markdown(self, text: str) -> None:
        self.lines.append(text)

    def print_file_link(self, label: str, path: str) -> None:
        self.lines.append(f"{label}<link {path}>")

    def show_recap(self) -> None:
        from commandcode.shell.recap import recap_lines

        self.recaps.append([text for _, text in recap_lines(self.agent.handle.messages)])

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def confirm(self, question: str, *, default: bool = False) -> bool:
        self.questions.append(question)
        return bool(self.answers.pop(0)) if self.answers else default

    def choose(self, question: str, options: Sequence[str], *, default: int = 0) -> int | None:
        return self.answers.pop(0) if self.answers else default  # type: ignore[no-any-return]

    def ask_text(self, question: str, *, default: str = "") -> str | None:
        return self.answers.pop(0) if self.answers else default  # type: ignore[no-any-return]

    def run_screen(self, screen: Any) -> Any:
        if self.on_screen is None:
            raise AssertionError("no screen in these tests")
        self.screens.append(screen)
        return self.on_screen(screen)

    def copy(self, text: str) -> str:
        self.copied.append(text)
        return "copied (fake)"

    def set_title(self, title: str) -> None:
        self.titles.append(title)

    def exit(self) -> None:
        self.exited = True

    def expand(self, number: int) -> None:
        self.expanded.append(number)

    @property
    def tool_call_count(self) -> int:
        return 3


def run_line(shell: FakeShell, line: str) -> None:
    """Runs the slash command `line` (`/name args`) in `shell`, as the shell's dispatch does."""
    from commandcode.shell.slash import registry

    name, _, args = line[1:].partition(" ")
    registry()[name].run(shell, args)
