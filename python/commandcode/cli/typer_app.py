"""The Typer application: every command and option of `commandcode`.

Commands stay thin: parse options, call a library function, render the result. `main()` (in
`__init__.py`) imports this module only when the argv fast path does not take the command.
"""

from __future__ import annotations

from typing import Optional

import typer

from . import (
    bench_cmd,
    branching,
    doctor,
    export_cmd,
    import_cmd,
    rewind_cmds,
    sessions,
    share_cmd,
    sweep_cmd,
    worktree_cmds,
)
from .output import USAGE_EXIT_CODE, fail, handle_errors

app = typer.Typer(
    name="commandcode",
    help="Sessions and checkpoints for AI coding agents, compatible with Command Code.",
    invoke_without_command=True,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(sessions.app, name="sessions")
app.add_typer(worktree_cmds.app, name="worktrees")
app.add_typer(import_cmd.app, name="import")
rewind_cmds.register(app)
branching.register(app, sessions.app)
bench_cmd.register(app)
export_cmd.register(app)
share_cmd.register(app)
sweep_cmd.register(app)
doctor.register(app)


@app.callback()
@handle_errors
def root(
    ctx: typer.Context,
    print_prompt: Optional[str] = typer.Option(None, "-p", "--print", help="Run one headless turn with this prompt."),
    output_format: str = typer.Option("text", "--output-format", help="text, json or stream-json (with -p)."),
    name: Optional[str] = typer.Option(None, "-n", "--name", help="Name the session."),
    resume: Optional[str] = typer.Option(None, "-r", "--resume", help="Resume a session (id, prefix or name)."),
    continue_last: bool = typer.Option(False, "-c", "--continue", help="Continue the most recent session here."),
    session: Optional[str] = typer.Option(None, "--session", metavar="PATH|PREFIX",
                                          help="Resume this transcript (a .jsonl outside the project is appended "
                                          "where it is) or the session with this unique id prefix."),
    fork_session: bool = typer.Option(False, "--fork-session",
                                      help="With -r, -c or --session: fork that session and run in the fork."),
    no_session: bool = typer.Option(False, "--no-session", help="Write no transcript."),
    worktree: Optional[str] = typer.Option(None, "-w", "--worktree", metavar="[NAME]",
                                           help="Run in a git worktree .commandcode/worktrees/NAME (a generated name "
                                           "when omitted) on a new branch worktree-NAME."),
    model: Optional[str] = typer.Option(None, "--model", help="provider/model from providers.json, or offline "
                                        "(default: config.json's model, else offline)."),
    effort: Optional[str] = typer.Option(None, "--effort", help="Reasoning effort: low, medium, high, xhigh, max."),
    permission_mode: Optional[str] = typer.Option(None, "--permission-mode",
                                                  help="default, acceptEdits, plan or bypassPermissions."),
    yolo: bool = typer.Option(False, "--yolo", "--dangerously-skip-permissions",
                              help="Run every tool call without asking (--permission-mode bypassPermissions)."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    """Without a command, runs a headless turn (-p) or starts the interactive shell."""
    if version:
        from .. import __version__

        typer.echo(f"commandcode {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is not None:
        if print_prompt is not None:
            from ..errors import UsageError

            raise UsageError("-p cannot be combined with a subcommand")
        return
    if print_prompt is None:  # usually started before typer (cli/__init__.py); this is the same launch
        from ..shell.launch import Launch
        from ..shell.start import run_shell

        launch = Launch()
        launch.name, launch.resume, launch.continue_last, launch.no_session = name, resume, continue_last, no_session
        launch.session, launch.fork_session = session, fork_session
        launch.worktree = worktree
        launch.model = None if model == "offline" else model
        run_shell(launch)
        raise typer.Exit()
    from .run import run_print  # the agent, writer and checkpoint code: only for a headless turn

    run_print(print_prompt, output_format=output_format, name=name, resume=resume, continue_last=continue_last,
              session=session, fork_session=fork_session, no_session=no_session, model_name=model, effort=effort, permission_mode=permission_mode, yolo=yolo,
              worktree=worktree)


def run_app(argv: list[str]) -> object:
    """Runs `app` on argv and returns the exit code. Click's own usage errors (an unknown option
    or command, a missing or invalid value) are one `error:` line and a `hint:` line, exit 2, like
    ours: not click's usage box, which also echoes the user's text unescaped."""
    try:
        code = app(args=worktree_cmds.expand_worktree_flag(argv), prog_name="commandcode", standalone_mode=False)
    except typer.Abort:
        raise fail("aborted") from None
    except typer.TyperException as error:
        if type(error).__name__ == "NoArgsIsHelpError":  # a group without a command: its help was shown
            return USAGE_EXIT_CODE
        from rich.markup import escape

        context = getattr(error, "ctx", None)
        where = context.command_path if context is not None else "commandcode"
        raise fail(escape(error.format_message()), escape(f"see `{where} --help`"),
                   code=getattr(error, "exit_code", USAGE_EXIT_CODE)) from None
    return code if isinstance(code, int) else 0
