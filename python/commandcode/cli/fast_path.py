"""The argv fast path: the commands that open sessions (the read-only ones, and the copies), run
without importing typer.

Importing typer (and its click) costs about 90 ms on these machines, several times a warm open
of a 1 GB session (~6 ms over interpreter start). So `main()` first offers the argv here: when it
is exactly one of `FAST_COMMANDS` (`sessions context|show|list|search|du|fork|clone`, from the command table
`command_table.py`) (the command words, then only known flags and the right number
of plain positional arguments), the same view function the typer command calls runs directly.
Anything else (`--help`, an unknown or misspelt option, `--`, `=`, a positional that starts with
`-`, a missing or extra argument) is left to typer, which parses it and prints its own usage
errors. `COMMANDCODE_FAST_PATH=off` turns the fast path off (the tests compare both paths).

Typer's declarations of these commands come from the same table, and a test pins each entry to
them, so the two cannot drift apart.
"""

from __future__ import annotations

from ..config.env import fast_path_enabled

# (command words) -> ("module:view function", positional parameter names,
#                     {flag: keyword parameter set to True},
#                     {option: (keyword parameter, "int" (a whole number >= 1) or "str")}),
# derived from the command table (`command_table.py`), which typer's declarations come from too.
FastCommand = tuple[str, tuple[str, ...], dict[str, str], dict[str, tuple[str, str]]]


def _fast_commands() -> dict[tuple[str, ...], FastCommand]:
    from .command_table import COMMANDS

    return {command.words: (command.view,
                            tuple(param.name for param in command.params if param.kind == "argument"),
                            {opt: param.name for param in command.params if param.kind == "switch" and param.fast
                             for opt in param.opts},
                            {opt: (param.name, param.kind) for param in command.params
                             if param.kind in ("int", "str") and param.fast for opt in param.opts})
            for command in COMMANDS}


FAST_COMMANDS = _fast_commands()


def parse_fast(argv: list[str]) -> tuple[str, dict[str, object]] | None:
    """("module:view function", keyword arguments) when argv is exactly a fast command, else None."""
    for words, (view, positional_names, flags, values) in FAST_COMMANDS.items():
        if tuple(argv[:len(words)]) != words:
            continue
        arguments: dict[str, object] = {}
        positionals: list[str] = []
        tokens = iter(argv[len(words):])
        for token in tokens:
            if token in flags:
                arguments[flags[token]] = True
            elif token in values:
                name, kind = values[token]
                value = next(tokens, None)
                if value is None or value.startswith("-"):
                    return None
                if kind == "int":
                    if not (value.isascii() and value.isdigit()) or int(value) < 1:
                        return None  # typer says what is wrong with it
                    arguments[name] = int(value)
                else:
                    arguments[name] = value
            elif token.startswith("-"):
                return None
            else:
                positionals.append(token)
        if len(positionals) != len(positional_names):
            return None
        arguments.update(zip(positional_names, positionals))
        return view, arguments
    return None


def run_fast(argv: list[str]) -> bool:
    """Runs argv if it is a fast command (and the fast path is on); False to leave it to typer.

    Raises SystemExit as the typer command would: code 1 after an error line, 130 on Ctrl-C."""
    if not fast_path_enabled():
        return False
    parsed = parse_fast(argv)
    if parsed is None:
        return False
    view_name, arguments = parsed
    from importlib import import_module

    from .launch_project import begin

    begin()  # a new command line: its own project context
    module, function = view_name.split(":")
    try:
        getattr(import_module(f"{__package__}.{module}"), function)(**arguments)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    return True
