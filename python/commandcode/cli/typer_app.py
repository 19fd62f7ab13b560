"""The Typer application: every command and option of `commandcode`.

Commands stay thin: parse options, call a library function, render the result. `main()` (in
`__init__.py`) imports this module only when the argv fast path does not take the command.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Optional

import typer

from ..launcher.flags import LAUNCH_FLAGS, Launch
from ..present.console import USAGE_EXIT_CODE, fail, handle_errors
from . import (
    bench,
    branching,
    doctor,
    export,
    import_,
    rewind,
    sessions,
    share,
    sweep,
    worktrees,
)

app = typer.Typer(
    name="commandcode",
    help="Sessions and checkpoints for AI coding agents, compatible with Command Code.",
    invoke_without_command=True,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(sessions.app, name="sessions")
app.add_typer(worktrees.app, name="worktrees")
app.add_typer(import_.app, name="import")
rewind.register(app)
branching.register(app, sessions.app)
bench.register(app)
export.register(app)
share.register(app)
sweep.register(app)
doctor.register(app)


def _root_signature() -> inspect.Signature:
    """The root callback's options, one per flag of the launch-flag table (`launcher/flags.py`)."""
    parameters = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    for flag in LAUNCH_FLAGS:
        switch = flag.kind == "switch"
        default: object = False if switch else ("text" if flag.attribute == "output_format" else None)
        option = typer.Option(default, *flag.names, help=flag.help, metavar=flag.metavar)
        annotation = bool if switch else (str if default is not None else Optional[str])
        parameters.append(inspect.Parameter(flag.attribute, inspect.Parameter.KEYWORD_ONLY, default=option,
                                            annotation=annotation))
    return inspect.Signature(parameters, return_annotation=None)


def _root(ctx: typer.Context, **options: Any) -> None:
    """Without a command, runs a headless turn (-p) or starts the interactive shell."""
    from .launch_project import begin

    begin()  # a new command line (typer runs this before any command): its own project context
    if options["version"]:
        from .. import __version__

        typer.echo(f"commandcode {__version__}")
        raise typer.Exit()
    print_prompt = options["print_prompt"]
    if ctx.invoked_subcommand is not None:
        if print_prompt is not None:
            from ..errors import UsageError

            raise UsageError("-p cannot be combined with a subcommand")
        return
    launch = Launch.from_options(options)
    if print_prompt is None:  # usually started before typer (cli/__init__.py); this is the same launch
        from ..shell.launch import run_shell

        if launch.model == "offline":
            launch.model = None
        run_shell(launch)
        raise typer.Exit()
    from .run import run_print  # the agent, writer and checkpoint code: only for a headless turn

    run_print(print_prompt, output_format=options["output_format"], launch=launch)


_root.__signature__ = _root_signature()  # type: ignore[attr-defined]
_root.__annotations__ = {parameter.name: parameter.annotation for parameter in _root.__signature__.parameters.values()}  # type: ignore[attr-defined]
root = app.callback()(handle_errors(_root))


@functools.cache
def _command() -> Any:
    """The click command tree of `app`, built once per process: typer builds it from the command
    functions' signatures on every `app(...)` (about 30 ms, most of an in-process command run;
    the mutation tests run thousands). Pretty exceptions are off, so `Typer.__call__`'s
    excepthook adds nothing to calling the tree."""
    return typer.main.get_command(app)


def run_app(argv: list[str]) -> object:
    """Runs `app` on argv and returns the exit code. Click's own usage errors (an unknown option
    or command, a missing or invalid value) are one `error:` line and a `hint:` line, exit 2, like
    ours: not click's usage box, which also echoes the user's text unescaped."""
    try:
        code = _command()(args=worktrees.expand_worktree_flag(argv), prog_name="commandcode", standalone_mode=False)
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
