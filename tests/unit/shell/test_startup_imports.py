"""Start-up is a feature: what launching the shell loads before its first prompt. Neither typer
(the launch flags are parsed without it) nor Textual (only a screen loads it) nor rich (the first
reply loads it) may be among it, whatever command modules `shell/commands/` holds."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from commandcode.cli import _run_shell_launch  # the route main() takes for a bare `commandcode`
from commandcode.shell.launch import parse_launch
from commandcode.shell import app, start
from commandcode.shell.slash import registry
from commandcode.agent.runtime import AgentSession
launch = parse_launch(["-n", "x"])
commands = registry()
shell = app.InteractiveShell(AgentSession.start(__import__("pathlib").Path.cwd()), status_command=None)
session = shell._make_session()  # the prompt, its key bindings, completer and history
print(sorted(name for name in ("typer", "click", "textual", "rich") if name in sys.modules))
"""


def test_the_shell_starts_without_typer_textual_or_rich(home, workdir) -> None:  # type: ignore[no-untyped-def]
    completed = subprocess.run([sys.executable, "-c", PROBE], cwd=workdir, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


WARM_PROBE = """
import sys
from commandcode.shell.launch import parse_launch
from commandcode.shell import app, start
from commandcode.shell.warm_start import Deferred
launch = parse_launch(["--permission-mode", "plan"])
launch.check()
assert launch.plain_new_session
shell = app.InteractiveShell(Deferred(lambda: None), permission_mode=launch.mode)
session = shell._make_session()
print(shell.toolbar())
print(sorted(name for name in sys.modules if name.startswith(("commandcode.agent.runtime", "commandcode.shell.commands.",
      "commandcode.config.settings", "commandcode.catalog", "commandcode.checkpoints", "commandcode.agent.permissions"))))
"""


def test_a_new_sessions_prompt_needs_neither_the_session_service_nor_the_commands(home, workdir) -> None:  # type: ignore[no-untyped-def]
    """The warm start (`shell/warm_start.py`): what a new session's first prompt loads leaves the
    session service, the slash-command modules, settings and checkpoints to the background."""
    completed = subprocess.run([sys.executable, "-c", WARM_PROBE], cwd=workdir, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    toolbar, modules = completed.stdout.strip().splitlines()
    assert "plan" in toolbar  # the status line shows the launch's mode before the session exists
    assert modules == "[]"
