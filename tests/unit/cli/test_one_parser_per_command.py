"""Every command of the command line has one parser, or two fed from one table (issue #27: "no
parser can drop a flag"). The read-only `sessions` commands are parsed by the argv fast path and
by typer, both from `cli/command_table.py`; the launch flags by the shell launch, typer's root
options and `-p`, all from `launcher/flags.py`. Every other command (`rewind`, `export`, `sweep`,
`share`, `worktrees`, ...) is typer's alone: the fast path and the shell launch decline any
argv that names it, with any of its options, so there is no second parser to fall out of step."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer.main

from commandcode.cli import app
from commandcode.cli.command_table import COMMANDS
from commandcode.cli.fast_path import parse_fast
from commandcode.shell.launch import parse_launch


def _leaves(command: Any, words: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if hasattr(command, "commands"):  # a group
        for name, child in command.commands.items():
            yield from _leaves(child, (*words, name))
    else:
        yield words, command


def test_only_table_commands_have_a_second_parser() -> None:
    table = {command.words for command in COMMANDS}
    leaves = dict(_leaves(typer.main.get_command(app)))
    assert table <= set(leaves)  # each table command is declared (from the table) in typer too
    others = sorted(set(leaves) - table)
    assert len(others) >= 15, others  # rewind, export, sweep, share, worktrees, goto, ...
    for words in others:
        command = leaves[words]
        options = [name for param in command.params if param.param_type_name == "option" for name in param.opts]
        arguments = ["X"] * sum(param.param_type_name == "argument" for param in command.params)
        for argv in ([*words], [*words, *arguments], *([*words, *arguments, option] for option in options)):
            assert parse_fast(argv) is None, argv  # typer parses it
            assert parse_launch(argv) is None, argv  # not a shell launch either
