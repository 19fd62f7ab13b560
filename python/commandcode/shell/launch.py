"""The shell's entry point for the command line, and its launch parser without typer (start-up
is a feature: typer's import alone costs a third of the 250 ms budget).

The command line dispatches into the shell only through this module: `parse_launch(argv)` and
`run_shell(launch)` (the shell's own start, `start.py`, is imported only then). `parse_launch`
returns the `Launch` options when argv starts the interactive shell (no subcommand, no `-p`, no
`--help`/`--version`), else None (typer takes it: subcommands, `-p`, help, and anything this
parser does not know, which typer then refuses as a usage error). The flags are those of the one
table, `launcher/flags.py` (`-n`, `--no-session`, `-r/--resume/--sessions [REF]`, `-c`,
`--session`, `--fork-session`, `--model`, `--effort`, `--permission-mode`, `--yolo`,
`-w/--worktree [NAME]`); `Launch.check()` refuses the combinations that make no sense, one line
each (a `UsageError`, exit 2).
"""

from __future__ import annotations

from ..launcher.flags import Launch, read_flags, shell_flag_names

__all__ = ["Launch", "parse_launch", "run_shell"]


def run_shell(launch: Launch) -> int:
    """Starts the shell for `launch`; returns the exit code (`start.py`)."""
    from .start import run_shell as start

    return start(launch)


def parse_launch(argv: list[str]) -> Launch | None:
    """The shell launch `argv` asks for, or None when it is not one (see the module docstring).

    Raises:
        UsageError: a flag that needs a value has none.
    """
    given = read_flags(argv, shell_flag_names())  # -p, help, a subcommand, an unknown flag: typer's
    if given is None:
        return None
    launch = Launch()
    for flag, value in given:
        setattr(launch, flag.attribute, value)
    return launch
