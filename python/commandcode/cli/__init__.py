"""The `commandcode` command line: headless runs and session inspection.

`main()` is the console-script entry point. The read-only commands that open sessions (`sessions
context|show|list` with plain flags) go through `fast_path.py`, which does not import typer:
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
        if not run_fast(argv):
            from .typer_app import run_app

            return run_app(argv)
        return 0
    except SystemExit as exit_request:
        return exit_request.code


def main() -> None:
    """Console-script entry point.

    Exits without tearing the heap down object by object: after a large context was built,
    interpreter teardown alone took seconds (measured on a 1 GB session). Exit handlers still
    run first (checkpoint digests are flushed from one), then the output is flushed.
    """
    code = run(sys.argv[1:])
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 0)
