"""What a running session's tools get from the workspace: the scratchpad and the worktree guard.

`prepare(session_id, project, notify)` provisions the scratchpad (unless `disableScratchpad`; and
sweeps this project's scratchpads untouched for 30 days, as the real CLI does at start), finds
the worktree the session runs in, and returns a `ToolSpace`: the environment the shell tool adds
(`$COMMANDCODE_SCRATCHPAD`), the guard every tool call passes (`isolation.check_tool_call`, only in
a worktree) and the lines that tell the model about its scratchpad. The agent's runtime calls it
once per session and hands `env` and `guard` to the tool runner. `copy_for_fork` copies the
scratchpad into a fork made at launch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.context import ProjectContext
from ..errors import SettingsError
from .isolation import check_tool_call
from .scratchpad import Scratchpad, copy_scratchpad, provision, sweep_scratchpads
from .worktrees import Worktree, worktree_of

Guard = Callable[[str, dict[str, Any], Path], "str | None"]


@dataclass
class ToolSpace:
    """The scratchpad and worktree of a session, as its tools see them."""

    scratchpad: Scratchpad | None = None
    worktree: Worktree | None = None
    env: dict[str, str] = field(default_factory=dict)

    def guard(self, name: str, tool_input: dict[str, Any], cwd: Path) -> str | None:
        """None when the call may run, else the refusal the model sees (worktree isolation)."""
        return check_tool_call(name, tool_input, cwd, self.worktree)

    def prompt(self) -> str | None:
        """The system-prompt lines about the scratchpad (None without one)."""
        return self.scratchpad.prompt() if self.scratchpad is not None else None


def _disabled(project: ProjectContext, notify: Callable[[str], None]) -> bool:
    try:
        return project.settings().disable_scratchpad
    except SettingsError as error:
        notify(f"{error}; the scratchpad is off for this session")
        return True


def copy_for_fork(source_id: str, fork_id: str, project: ProjectContext, notify: Callable[[str], None]) -> bool:
    """A fork made at launch (`--fork-session`) gets a copy of its source's scratchpad (as the
    seed says; the real CLI 1.64 copies none), unless the settings turn scratchpads off.
    Fail-open: an unsafe folder is one notice and the fork runs with an empty scratchpad."""
    folder = project.cwd
    if _disabled(project, notify):
        return False
    try:
        return copy_scratchpad(source_id, fork_id, folder, notify=notify)
    except OSError as error:
        notify(f"the scratchpad of {source_id} was not copied: {error.strerror or error}")
        return False


def prepare(session_id: str, project: ProjectContext, notify: Callable[[str], None]) -> ToolSpace:
    """The `ToolSpace` of a session starting in the caller's context's folder (`project.cwd`), its
    settings saying whether scratchpads are on. Fail-open: a settings file that cannot be read,
    or an unsafe scratchpad folder, is one notice and the session runs without a scratchpad."""
    folder = project.cwd
    scratchpad = provision(session_id, folder, disabled=_disabled(project, notify), notify=notify)
    if scratchpad is not None:
        sweep_scratchpads(keep=frozenset({session_id}), cwd=folder)  # this project's, over 30 days old
    space = ToolSpace(scratchpad, worktree_of(folder))
    if scratchpad is not None:
        space.env = scratchpad.env()
    return space
