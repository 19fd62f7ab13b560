"""The `commandcode` command line: headless runs and session inspection.

`main()` is the console-script entry point. The commands that open sessions (`sessions
context|show|list|fork|...` with plain flags) go through `fast_path.py`, which does not import typer:
typer's own import costs several times a warm open of a 1 GB session. Everything else, `--help`
and every argv the fast path does not recognise exactly, goes to the Typer `app` (`typer_app.py`).
"""

from __future__ import annotations

import atexit
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typer import Typer

    app: Typer


def __getattr__(name: str) -> object:
    """`commandcode.cli.app`, imported on first use."""
    if name == "app":
        from .typer_app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run(argv: list[str]) -> object:
    """Runs one command line; returns its exit code (an int, or a message to print)."""
    from .fast_path import run_fast

    try:
        argv = prompt_from_stdin(argv)
        _continue_ahead(argv)
        if _run_shell_launch(argv):
            return 0
        if not run_fast(argv):
            from .typer_app import run_app

            return run_app(argv)
        return 0
    except SystemExit as exit_request:
        return exit_request.code
    except KeyboardInterrupt:
        return 130
    except BaseException as error:  # also a Rust panic: pyo3's PanicException is a BaseException
        if not isinstance(error, Exception) and type(error).__module__ != "pyo3_runtime":
            raise  # GeneratorExit and the like
        from ..config.env import debug_enabled

        if debug_enabled():
            raise
        return internal_error(error)


PRINT_FLAGS = ("-p", "--print")


def prompt_from_stdin(argv: list[str]) -> list[str]:
    """`echo PROMPT | commandcode -p [...]`: a `-p` given no prompt takes its standard input, as
    Claude Code's does (the prompt is missing when `-p` is last or an option follows it). A
    terminal on stdin is never read: the usual "requires an argument" error stays."""
    for index, token in enumerate(argv):
        if token == "--":
            break
        if token not in PRINT_FLAGS:
            continue
        following = argv[index + 1] if index + 1 < len(argv) else None
        if following is not None and not (following.startswith("-") and len(following) > 1):
            return argv
        if sys.stdin is None or sys.stdin.isatty():
            return argv
        prompt = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        return [*argv[: index + 1], prompt.removesuffix("\n"), *argv[index + 1:]]
    return argv


def _continue_ahead(argv: list[str]) -> None:
    """`-c` (headless or in the shell): the catalog rows of this directory's sessions refreshed on
    another thread while the launch imports the rest (`catalog/warmup.py`). The launch flags'
    table says whether argv is such a launch (`launcher.flags.continues_here`): not a `-c` of a
    subcommand or a flag's value, nor a launch that moves into a worktree first (`-w`)."""
    from ..launcher.flags import continues_here

    if not continues_here(argv):
        return
    from ..catalog.warmup import begin

    try:
        here = os.getcwd()
    except OSError:  # a directory removed under the shell: the launch says so itself
        return
    begin(here)


def _run_shell_launch(argv: list[str]) -> bool:
    """Runs the interactive shell when argv launches it (no subcommand, no -p: `shell/launch.py`),
    without importing typer; False when argv is typer's."""
    from ..errors import UsageError
    from ..shell.launch import parse_launch, run_shell

    try:
        launch = parse_launch(argv)
    except UsageError as error:
        from ..present.console import USAGE_EXIT_CODE, fail

        raise fail(str(error), error.hint, code=USAGE_EXIT_CODE) from None
    if launch is None:
        return False
    run_shell(launch)
    return True


INTERNAL_ERROR = "error: internal error"
INTERNAL_HINT = ("hint: this is a bug in commandcode; please report it with the command you ran "
                 "(COMMANDCODE_DEBUG=1 shows the traceback)")


def internal_error(error: BaseException) -> int:
    """Prints one `error:` line (and a hint to report it) for an exception no command handled;
    returns exit code 1. Nothing else is printed: a traceback shown to a user is a bug."""
    from ..present.console import printable

    detail = printable(f"{type(error).__name__}: {error}", one_line=True)
    if len(detail) > 300:
        detail = detail[:300] + "…"
    sys.stdout.flush()
    sys.stderr.write(f"{INTERNAL_ERROR} ({detail})\n{INTERNAL_HINT}\n")
    sys.stderr.flush()
    return 1


def main() -> None:
    """Console-script entry point.

    Exits without tearing the heap down object by object: after a large context was built,
    interpreter teardown alone took seconds (measured on a 1 GB session). Exit handlers still
    run first (checkpoint digests are flushed from one), then the output is flushed.
    """
    from ..config.paths import data_root

    data_root()  # a relative $COMMANDCODE_HOME is made absolute before anything can chdir
    code = run(sys.argv[1:])
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):  # None when started with the descriptor closed
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # the reader went away: what is left cannot be delivered
            pass
    os._exit(code if isinstance(code, int) else 0)
