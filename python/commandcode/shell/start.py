"""Launching the shell: presents the session the launcher service starts (`launcher.start`:
where it runs, the session, share re-arm, the daily sweep), made before the prompt (a resume, a
fork, a name or model to check first: its errors refuse the launch, one line) or behind it (a
plain new session, `warm_start.py`: start-up is a feature), then the prompt loop of `app.py`
and the closing notice saying how to resume.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CommandcodeError
from . import terminal
from .app import InteractiveShell
from .slash import registry
from .warm_start import Deferred

if TYPE_CHECKING:
    from ..agent.runtime import AgentSession
    from ..config.context import ProjectContext
    from ..launcher.flags import Launch
    from ..launcher.start import Place


def _start_agent(launch: Launch, where: Place) -> AgentSession:
    """The launch's session, open, where `launcher.start.place` put it (the launcher service)."""
    from ..launcher.start import start

    if launch.resume == "" and "resume" not in registry():
        raise CommandcodeError("-r without a session needs the session picker, which this build does not have yet",
                               hint="pass the session: commandcode -r ID|PREFIX|NAME")

    def warn(text: str) -> None:
        sys.stderr.write(f"warning: {text}\n")

    return start(launch, where, entrypoint=None, notify=warn)


def run_shell(launch: Launch) -> int:
    """Starts the shell for `launch` (`shell/launch.py`); returns the exit code."""
    from ..errors import UsageError
    from ..present.console import fail

    try:
        launch.check()  # a bad flag combination is a usage error, terminal or not
    except UsageError as error:
        raise fail(str(error), error.hint, code=2) from None
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise fail("the interactive shell needs a terminal", "for a headless turn use: commandcode -p PROMPT", code=2)
    from ..launcher.start import place

    try:  # -w: a new session worktree; a worktree session resumes in its worktree (the cwd moves there)
        where = place(launch, move=True)
    except CommandcodeError as error:
        raise fail(str(error), error.hint, code=2 if isinstance(error, UsageError) else 1) from None
    if launch.plain_new_session:
        return _run_warm(launch, where)
    try:  # with --fork-session, a fork (a new process: no session grants carry over)
        agent = _start_agent(launch, where)  # a failure abandons the worktree made for it
    except CommandcodeError as error:
        raise fail(str(error), error.hint, code=2 if isinstance(error, UsageError) else 1) from None
    except OSError as error:
        raise _os_failure(error) from None
    try:
        shell = InteractiveShell(agent, permission_mode=launch.mode)
        shell.status_line.command = _status_command(shell.project)
        return _run_entered(shell, launch, where)
    finally:
        agent.close()


def _run_warm(launch: Launch, where: Place) -> int:
    """A plain new session: the prompt first, the session made behind it (`warm_start.py`)."""
    from ..present.console import fail

    shell: InteractiveShell

    def make() -> AgentSession:
        agent = _start_agent(launch, where)
        shell.adopt(agent)
        shell.status_line.command = _status_command(agent.handle.project)  # not `shell.agent`: this makes it
        return agent

    shell = InteractiveShell(Deferred(make, on_done=lambda: shell.on_warm()), permission_mode=launch.mode)
    try:
        return _run_entered(shell, launch, where)
    except CommandcodeError as error:  # the session could not be made
        raise fail(str(error), error.hint) from None
    except OSError as error:  # the data dir, say
        raise _os_failure(error) from None
    finally:
        agent = shell.made_agent
        if agent is not None:
            agent.close()


def _os_failure(error: OSError) -> SystemExit:
    """One line for a session that could not be made on disk (exit 1)."""
    from ..present.console import fail

    where = f"{error.filename}: " if error.filename else ""
    return fail(f"cannot start the session: {where}{error.strerror or error}",
                "check that the data dir ($COMMANDCODE_HOME, else ~/.commandcode) is a writable directory")


def _run_entered(shell: InteractiveShell, launch: Launch, where: Place) -> int:
    from ..launcher.start import start_auto_sweep
    from .workspace_hooks import finish_worktrees

    here, worktree = Path.cwd(), where.worktree

    def sweep_check() -> None:  # at most once a day, in the background; never the session on screen
        shown = shell.made_agent
        start_auto_sweep(here, keep=[shown.session_id] if shown is not None else [])

    shell.when_prompt_up.append(sweep_check)
    made = shell.made_agent
    terminal.set_title(made.name if made is not None and made.name else "commandcode")
    if made is not None and not made.handle.is_new:
        shell.notice(f"resumed session {made.session_id}" + (f" ({made.name})" if made.name else ""))
        if where.notice:
            shell.notice(where.notice)
        shell.show_recap()
        shell.rearm_share()
    if worktree is not None:
        shell.notice(f"working in the worktree {worktree.path} on branch {worktree.branch}; "
                     "tool calls into the main checkout are refused")
    if launch.resume == "":  # a bare -r: the picker (/resume) chooses, in a new session until it does
        shell.run_slash(shell.commands["resume"], "")
    shell.run()
    agent = shell.agent  # raises what making a deferred session raised
    removed = finish_worktrees(shell, worktree)  # a clean generated worktree goes; one holding work asks
    if agent.handle.exists_on_disk and agent.handle.persist:
        gone = next((tree for tree in removed if Path(agent.cwd).resolve().is_relative_to(Path(tree.path).resolve())), None)
        if gone is None:
            shell.notice(f"session {agent.session_id} saved; resume it with: commandcode -r {agent.session_id}")
        else:  # its folder is gone: a resume runs where it is started, so say where that should be
            shell.notice(f"session {agent.session_id} saved; its worktree was removed, so resume it in the main "
                         f"checkout: cd {gone.main_root} && commandcode -r {agent.session_id}")
    return 0


def _status_command(project: ProjectContext) -> str | None:
    """The `statusLine` command of the launch's settings (None: the built-in line). A malformed
    settings file is one warning here (the shell still starts; each turn then refuses with that
    file's line, `agent.runtime`), and the settings' own warnings are shown once."""
    from ..errors import SettingsError

    try:
        settings = project.settings()
    except SettingsError as error:
        sys.stderr.write(f"warning: {error} (settings ignored for the status line)\n")
        return None
    for warning in project.warnings:
        sys.stderr.write(f"warning: {warning}\n")
    line = settings.status_line
    return line["command"] if line else None
