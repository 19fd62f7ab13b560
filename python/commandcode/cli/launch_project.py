"""The project context of one command-line launch (`config/context.py`): made on first use for
the folder the command runs in, once per launch (`begin()` is called where a command line starts
to run: typer's root callback and the argv fast path), and handed down by the commands that read
settings or paths (`sweep`, `sessions du`, `export`, `share`, `unshare`). A command that opens
a session passes it to the session (`AgentSession(project=...)`, as `rewind` and `checkpoints
list` do), which keeps it when the session runs in this folder and makes its own otherwise."""

from __future__ import annotations

import os

from ..config.context import ProjectContext

_launch: ProjectContext | None = None


def begin() -> None:
    """A new command line starts: the next `launch_project()` makes its context."""
    global _launch
    _launch = None


def launch_project() -> ProjectContext:
    """This launch's context (made on first use: the settings are read only when asked)."""
    global _launch
    if _launch is None:
        _launch = ProjectContext(os.getcwd())
    return _launch
