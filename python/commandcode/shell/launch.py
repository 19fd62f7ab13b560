"""The shell's launch flags, parsed without typer (start-up is a feature: typer's import alone
costs a third of the 250 ms budget).

`parse_launch(argv)` returns the `Launch` options when argv starts the interactive shell (no
subcommand, no `-p`, no `--help`/`--version`), else None (typer takes it: subcommands, `-p`, help,
and anything this parser does not know, which typer then refuses as a usage error). Flags:
`-n/--name NAME`, `--no-session`, `-r/--resume [REF]`, `--sessions [REF]`, `-c/--continue`,
`--session PATH|PREFIX`, `--fork-session`, `--model M`, `--effort E`, `--permission-mode MODE`,
`--yolo` (alias `--dangerously-skip-permissions`), `-w/--worktree [NAME]` (the shell starts in a
session worktree it creates; a bare flag generates the name). `check()` refuses the combinations that make
no sense, one line each (a `UsageError`, exit 2).
"""

from __future__ import annotations

from ..errors import UsageError

_NOT_SHELL = frozenset({"-p", "--print", "-h", "--help", "--version", "--output-format"})
_VALUE = {"-n": "name", "--name": "name", "--session": "session", "--model": "model", "--effort": "effort",
          "--permission-mode": "permission_mode"}
_OPTIONAL_VALUE = {"-r": "resume", "--resume": "resume", "--sessions": "resume", "-w": "worktree", "--worktree": "worktree"}
_FLAGS = {"--no-session": "no_session", "-c": "continue_last", "--continue": "continue_last",
          "--fork-session": "fork_session", "--yolo": "yolo", "--dangerously-skip-permissions": "yolo"}


class Launch:
    """The options of one shell launch (`resume` is `""` for a bare `-r`: the picker)."""

    def __init__(self) -> None:
        self.name: str | None = None
        self.no_session = False
        self.resume: str | None = None
        self.continue_last = False
        self.session: str | None = None
        self.fork_session = False
        self.model: str | None = None
        self.effort: str | None = None
        self.permission_mode: str | None = None
        self.yolo = False
        self.worktree: str | None = None  # -w/--worktree: a name, or "" for a generated one
        self.place_notice: str | None = None  # set at start: a resume moved into its session's worktree

    def check(self) -> None:
        """Refuses flag combinations that cannot go together.

        Raises:
            UsageError: one line naming the flags.
        """
        chosen = [flag for flag, on in (("-r/--resume", self.resume is not None), ("-c/--continue", self.continue_last),
                                        ("--session", self.session is not None)) if on]
        if len(chosen) > 1:
            raise UsageError(f"{' and '.join(chosen)} cannot be used together", hint="pick one way to choose the session")
        if self.fork_session and not chosen:
            raise UsageError("--fork-session needs a session to fork", hint="add -r REF, -c or --session PATH")
        if self.fork_session and self.no_session:
            raise UsageError("--fork-session and --no-session cannot be used together",
                             hint="a fork is a new saved session; drop one of them")
        from ..agent.permission_modes import PERMISSION_MODES

        if self.permission_mode is not None and self.permission_mode not in PERMISSION_MODES:
            raise UsageError(f"unknown permission mode {self.permission_mode!r}", hint=f"use one of {', '.join(PERMISSION_MODES)}")
        if self.yolo and self.permission_mode not in (None, "bypassPermissions"):
            raise UsageError(f"--yolo and --permission-mode {self.permission_mode} cannot be used together",
                             hint="--yolo is --permission-mode bypassPermissions")
        for flag, value in (("--name", self.name), ("--session", self.session), ("--model", self.model), ("--effort", self.effort)):
            if value is not None and not value.strip():
                raise UsageError(f"{flag} is empty", hint=f"pass a value: {flag} VALUE")

    @property
    def plain_new_session(self) -> bool:
        """A new session with nothing to check first (no session to find, name to take, model
        or effort to resolve): the shell may draw its prompt before making it (`warm_start.py`)."""
        return (self.resume is None and not self.continue_last and self.session is None and not self.fork_session
                and self.name is None and self.model is None and self.effort is None)

    @property
    def mode(self) -> str | None:
        """The permission mode to start in (None: the settings' `permissions.defaultMode`)."""
        return "bypassPermissions" if self.yolo else self.permission_mode


def parse_launch(argv: list[str]) -> Launch | None:
    """The shell launch `argv` asks for, or None when it is not one (see the module docstring).

    Raises:
        UsageError: a flag that needs a value has none.
    """
    launch = Launch()
    index = 0
    while index < len(argv):
        argument = argv[index]
        flag, has_inline, inline = argument.partition("=") if argument.startswith("--") else (argument, "", "")
        if flag in _NOT_SHELL or not argument.startswith("-") or argument == "-":
            return None  # a subcommand, -p, help: typer's
        if flag in _VALUE:
            if has_inline:
                value = inline
            elif index + 1 < len(argv):
                index += 1
                value = argv[index]
            else:
                raise UsageError(f"{flag} needs a value", hint=f"commandcode {flag} VALUE")
            setattr(launch, _VALUE[flag], value)
        elif flag in _OPTIONAL_VALUE:
            if has_inline:
                value = inline
            elif index + 1 < len(argv) and not argv[index + 1].startswith("-"):
                index += 1
                value = argv[index]
            else:
                value = ""
            setattr(launch, _OPTIONAL_VALUE[flag], value)
        elif flag in _FLAGS and not has_inline:
            setattr(launch, _FLAGS[flag], True)
        else:
            return None  # unknown: typer reports it as a usage error
        index += 1
    return launch
