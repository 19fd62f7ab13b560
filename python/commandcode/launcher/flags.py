"""The launch flags of `commandcode` (no subcommand), declared once: `LAUNCH_FLAGS`.

The table drives every parser that reads them: the shell's launch parser without typer
(`shell/launch.py`: start-up is a feature), the root options of the Typer app
(`cli/typer_app.py`, generated from the table) and the headless run (`cli/run.py`), which all
build the same `Launch` from it (`Launch.from_options`), so no parser can drop a flag. Each
`Flag` says its names, how it takes a value (`value`, `optional`: a bare flag means "" (the
picker, a generated worktree name), `switch`), its help, and where it applies (`shell`: also
the interactive launch; `-p` and `--output-format` are headless only, `--version` neither).
"""

from __future__ import annotations

from ..errors import UsageError


class Flag:
    """One launch flag: `attribute` of `Launch` it sets, its names and how it takes a value."""

    __slots__ = ("attribute", "names", "shell_names", "kind", "help", "metavar", "shell")

    def __init__(self, attribute: str, names: tuple[str, ...], kind: str, help: str, *, metavar: str | None = None,
                 shell_names: tuple[str, ...] = (), shell: bool = True) -> None:
        self.attribute = attribute
        self.names = names  # what typer declares, and the shell parser knows too
        self.shell_names = shell_names  # more names only the shell launch takes (`--sessions`)
        self.kind = kind  # "value", "optional" or "switch"
        self.help = help
        self.metavar = metavar
        self.shell = shell  # False: a flag that is not a shell launch (typer's alone)


LAUNCH_FLAGS: tuple[Flag, ...] = (
    Flag("print_prompt", ("-p", "--print"), "value", "Run one headless turn with this prompt.", shell=False),
    Flag("output_format", ("--output-format",), "value", "text, json or stream-json (with -p).", shell=False),
    Flag("name", ("-n", "--name"), "value", "Name the session."),
    Flag("resume", ("-r", "--resume"), "optional", "Resume a session (id, prefix or name).",
         shell_names=("--sessions",)),
    Flag("continue_last", ("-c", "--continue"), "switch", "Continue the most recent session here."),
    Flag("session", ("--session",), "value", "Resume this transcript (a .jsonl outside the project is appended "
         "where it is) or the session with this unique id prefix.", metavar="PATH|PREFIX"),
    Flag("fork_session", ("--fork-session",), "switch", "With -r, -c or --session: fork that session and run in the fork."),
    Flag("no_session", ("--no-session",), "switch", "Write no transcript."),
    Flag("worktree", ("-w", "--worktree"), "optional", "Run in a git worktree .commandcode/worktrees/NAME (a generated "
         "name when omitted) on a new branch worktree-NAME.", metavar="[NAME]"),
    Flag("model", ("--model",), "value", "provider/model from providers.json, or offline "
         "(default: config.json's model, else offline)."),
    Flag("effort", ("--effort",), "value", "Reasoning effort: low, medium, high, xhigh, max."),
    Flag("permission_mode", ("--permission-mode",), "value", "default, acceptEdits, plan or bypassPermissions."),
    Flag("yolo", ("--yolo", "--dangerously-skip-permissions"), "switch",
         "Run every tool call without asking (--permission-mode bypassPermissions)."),
    Flag("version", ("--version",), "switch", "Print the version and exit.", shell=False),
)
SHELL_ATTRIBUTES = tuple(flag.attribute for flag in LAUNCH_FLAGS if flag.shell)


def shell_flag_names() -> dict[str, Flag]:
    """Every name the shell launch parser takes, to its flag."""
    return {name: flag for flag in LAUNCH_FLAGS if flag.shell for name in (*flag.names, *flag.shell_names)}


def read_flags(argv: list[str], names: dict[str, Flag]) -> list[tuple[Flag, str | bool]] | None:
    """The flags of `names` that `argv` gives, in order, each with its value (a switch's is
    True); None when argv holds anything else (a subcommand, `-`, help, a flag not in `names`):
    it is not that launch. A value flag takes the next token whatever it is (`-p -c`: the prompt
    is "-c"), an optional one takes it unless it starts with `-`; `--flag=value` works for both.

    Raises:
        UsageError: a flag that needs a value has none.
    """
    given: list[tuple[Flag, str | bool]] = []
    index = 0
    while index < len(argv):
        argument = argv[index]
        name, has_inline, inline = argument.partition("=") if argument.startswith("--") else (argument, "", "")
        known = names.get(name) if argument.startswith("-") and argument != "-" else None
        if known is None or (known.kind == "switch" and has_inline):
            return None
        value: str | bool = True
        if known.kind != "switch":
            if has_inline:
                value = inline
            elif index + 1 < len(argv) and (known.kind == "value" or not argv[index + 1].startswith("-")):
                index += 1
                value = argv[index]
            elif known.kind == "value":
                raise UsageError(f"{name} needs a value", hint=f"commandcode {name} VALUE")
            else:
                value = ""
        given.append((known, value))
        index += 1
    return given


def continues_here(argv: list[str]) -> bool:
    """Whether `argv` is a launch (the shell's or `-p`'s) that continues the newest session of the
    current directory (`-c`) without moving into a worktree first (`-w`): a `-c` elsewhere (a
    subcommand's, a flag's value) is not one. A malformed launch is not one either (it fails)."""
    try:
        given = read_flags(argv, {name: flag for flag in LAUNCH_FLAGS for name in flag.names})
    except UsageError:
        return False
    attributes = {flag.attribute for flag, _ in given or ()}
    return "continue_last" in attributes and "worktree" not in attributes


class Launch:
    """The options of one launch (`resume` is `""` for a bare `-r`: the picker), one attribute
    per shell flag of `LAUNCH_FLAGS`."""

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

    @classmethod
    def from_options(cls, options: dict[str, object]) -> Launch:
        """The launch of parsed options (typer's keyword arguments): every shell flag of the
        table is taken, so a flag added there reaches the shell from every parser."""
        launch = cls()
        for attribute in SHELL_ATTRIBUTES:
            if attribute in options:
                setattr(launch, attribute, options[attribute])
        return launch

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
