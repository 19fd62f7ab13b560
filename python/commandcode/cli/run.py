"""`commandcode -p PROMPT`: one headless turn in the current directory, written as a real session.

A thin caller of `agent.runtime.AgentSession`: it checks the options, decodes argv text as Node
does, picks the model (`--model provider/model`, else `config.json`'s, else the offline one),
applies `--effort` and the permission mode (`--permission-mode`, `--yolo`), runs the turn and
prints it as `cli/headless.py` says. Headless rules: nobody can answer a permission question,
so what would be asked is refused as a tool error and the turn goes on (agent/permissions.py).
Background sub-agent runs still going when the turn ends are waited for (`headless.py`).
`-p` never writes the prompt history (the real CLI's rule; the interactive shell does).
"""

from __future__ import annotations

from pathlib import Path

from ..agent.providers.registry import resolve_model
from ..agent.runtime import AgentSession
from ..agent.turns import preload
from ..config.paths import node_text
from ..errors import CommandcodeError, UsageError
from ..present.console import warn
from .headless import FORMATS, Reporter, follow_share, wait_for_background_runs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..launcher.flags import Launch


def from_argv(text: str) -> str:
    """Command-line text as Node reads it: bytes that are not UTF-8 become U+FFFD (Python keeps
    them as lone surrogates, which would reach the transcript as `\\udcXX` escapes)."""
    return node_text(text)


def permission_mode_of(permission_mode: str | None, yolo: bool) -> str | None:
    """The mode the flags ask for (None: the settings' `permissions.defaultMode`).

    Raises:
        UsageError: `--yolo` with another mode, or an unknown mode.
    """
    from ..agent.permissions import check_mode

    if yolo:
        if permission_mode not in (None, "bypassPermissions"):
            raise UsageError(f"--yolo means --permission-mode bypassPermissions; it cannot be combined with {permission_mode}",
                             hint="pass one of them")
        return "bypassPermissions"
    return check_mode(permission_mode) if permission_mode is not None else None


def run_print(prompt: str, *, output_format: str, launch: Launch) -> None:
    """Runs one headless turn and prints it; with `launch.worktree` (a name, or "" for a
    generated one) in a session worktree it creates, which a headless run never removes.
    `launch.session` is `--session PATH|PREFIX` (resolved as `-r` resolves: a transcript path is
    appended where it is, an ambiguous prefix lists the candidates); `launch.fork_session` forks
    the chosen session first."""
    resume, continue_last, session, no_session = launch.resume, launch.continue_last, launch.session, launch.no_session
    fork_session = launch.fork_session
    if output_format not in FORMATS:
        raise UsageError(f"unknown output format {output_format!r}", hint="use text, json or stream-json")
    chosen = [flag for flag, on in (("-r", bool(resume)), ("-c", continue_last), ("--session", session is not None)) if on]
    if len(chosen) > 1:
        raise UsageError(f"{' and '.join(chosen)} cannot be used together", hint="pick one way to choose the session")
    if session is not None and not session.strip():
        raise UsageError("--session is empty", hint="pass a value: --session PATH|PREFIX")
    if fork_session and not chosen:
        raise UsageError("--fork-session needs a session to fork", hint="add -r REF, -c or --session PATH")
    if fork_session and no_session:
        raise UsageError("--fork-session and --no-session cannot be used together",
                         hint="a fork is a new saved session; drop one of them")
    prompt = from_argv(prompt)
    launch.name = from_argv(launch.name) if launch.name else launch.name
    if not prompt.strip():
        raise UsageError("the prompt is empty", hint='pass the prompt text: commandcode -p "PROMPT" (or pipe it: echo PROMPT | commandcode -p)')
    permission_mode_of(launch.permission_mode, launch.yolo)  # refused before anything starts (`launch.mode` is it)
    reporter = Reporter(output_format)
    reporter.cwd = str(Path.cwd())
    try:
        _run(prompt, reporter, launch)
    except _Reported:
        if reporter.lost:
            raise _lost(reporter) from None
        raise
    except CommandcodeError as error:  # the result object/event comes last, also on errors
        reporter.result(text="", error=str(error))
        raise
    if reporter.lost:
        raise _lost(reporter)


def _lost(reporter: Reporter) -> CommandcodeError:
    """The error of a run whose output could not be written (the turn itself ran)."""
    where = f"; the turn ran and is saved in session {reporter.session_id}" if reporter.session_id else \
        "; the turn ran"
    return CommandcodeError(f"stdout was closed, so the output was lost{where}",
                            hint=f"commandcode sessions show {reporter.session_id}" if reporter.session_id else None)


def _run(prompt: str, reporter: Reporter, launch: Launch) -> None:
    """The turn, in the session the launcher service opens (`launcher.start`); the worktree it
    made for `-w` goes if the launch fails, and stays once the session is open."""
    from ..launcher.start import place, start

    model = resolve_model(launch.model, warn=warn) if launch.model is not None else None  # else the session's, or config.json's
    reporter.model_id = model.model_id if model is not None else ""
    where = place(launch, move=False)
    reporter.cwd = str(where.cwd)
    no_session = launch.no_session

    def opened(agent: AgentSession) -> None:
        if where.worktree is not None:
            warn(f"working in the worktree {where.worktree.path} (branch {where.worktree.branch}); a -p run keeps it")
        if no_session:
            warn("--no-session: this turn's edits are not checkpointed; no rewind can undo them")
        reporter.session_id = None if no_session else agent.session_id
        reporter.model_id = agent.models.model.model_id
        reporter.init(session_id=reporter.session_id, cwd=str(agent.cwd), model_id=agent.models.model.model_id,
                      permission_mode=agent.models.effective_permission_mode())
        if not no_session:
            follow_share(agent.files, agent.handle.project)

    preload()  # the turn's modules, while a `-c` warm-up still reads the transcripts
    agent = start(launch, where, entrypoint="print", notify=warn, model=model, opened=opened)
    try:
        result = agent.turns.run_turn(prompt, on_event=reporter.on_event)
        background, background_error = wait_for_background_runs(agent.turns)  # Ctrl+C: the close stops them
    finally:
        agent.close()
    for notice in result.notices:
        if notice not in reporter.noticed:  # those the turn reported live are printed already
            warn(notice)
    extra: dict[str, object] = {"tool_calls": result.tool_calls}
    if result.notices:  # e.g. checkpoints the 200-backup cap dropped
        extra["notices"] = result.notices
    if background:
        extra["background_agents"] = background
    if result.error is not None:  # recorded in the session (`Error: …`), and a failed run for the caller
        reporter.result(text=result.text, error=result.error, extra=extra)
        raise _Reported(f"the turn failed: {result.error}",
                        hint=None if no_session else f"the turn and its error are saved in session {agent.session_id}")
    if background_error is not None:  # text: the reply still prints; json: the result is an error, the reply kept
        if reporter.format != "text":
            extra["reply"] = result.text
        reporter.result(text=result.text, error=None if reporter.format == "text" else background_error, extra=extra)
        raise _Reported(background_error, hint=None if no_session else
                        f"its transcript is kept with the session: commandcode sessions show {agent.session_id}")
    reporter.result(text=result.text, error=None, extra=extra)


class _Reported(CommandcodeError):
    """A failure whose result object was printed already."""
