"""The argv fast path: the read-only commands that open sessions, run without importing typer.

Importing typer (and its click) costs about 90 ms on these machines, several times a warm open
of a 1 GB session (~6 ms over interpreter start). So `main()` first offers the argv here: when it
is exactly one of `FAST_COMMANDS` (`sessions context|show|list|search|du`) (the command words, then only known flags and the right number
of plain positional arguments), the same view function the typer command calls runs directly.
Anything else (`--help`, an unknown or misspelt option, `--`, `=`, a positional that starts with
`-`, a missing or extra argument) is left to typer, which parses it and prints its own usage
errors. `COMMANDCODE_FAST_PATH=off` turns the fast path off (the tests compare both paths).

A test pins each entry to the typer declaration, so the two cannot drift apart.
"""

from __future__ import annotations

from ..config.env import fast_path_enabled

# (command words) -> (view function in session_views, positional parameter names,
#                     {flag: keyword parameter set to True},
#                     {option: (keyword parameter, "int" (a whole number >= 1) or "str")})
FastCommand = tuple[str, tuple[str, ...], dict[str, str], dict[str, tuple[str, str]]]
FAST_COMMANDS: dict[tuple[str, ...], FastCommand] = {
    ("sessions", "context"): ("context_view", ("ref",), {"--json": "as_json", "--stats": "stats"}, {}),
    ("sessions", "show"): ("show_view", ("ref",), {"--json": "as_json"}, {}),
    ("sessions", "list"): ("list_view", (), {"--all": "all_sessions", "--all-projects": "all_projects",
                                              "--worktrees": "worktrees", "--json": "as_json"},
                           {"--limit": ("limit", "int"), "--branch": ("branch", "str")}),
    ("sessions", "search"): ("search_view", ("query",), {"--all-projects": "all_projects", "--deep": "deep",
                                                          "--newest": "newest", "--json": "as_json"},
                             {"--limit": ("limit", "int")}),
    ("sessions", "du"): ("du_view", (), {"--all-projects": "all_projects", "--json": "as_json"}, {}),
}


def parse_fast(argv: list[str]) -> tuple[str, dict[str, object]] | None:
    """(view name, keyword arguments) when argv is exactly a fast command, else None."""
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
    from . import session_views

    try:
        getattr(session_views, view_name)(**arguments)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    return True
