"""The command line the side-by-side benches share: the variants they measure, named
(`--python before=/old/.venv/bin/python`, `--tree after=python`, repeated), how much one run does
and how many rounds alternate the variants (`bench_bash_tool.py`, `bench_headless_turns.py`).

A variant that is not `NAME=PATH`, or two with one name, is a usage error (one line, exit 2), as
are a count or a number of rounds below 1.
"""

from __future__ import annotations

import argparse


class SideBySide:
    """What a side-by-side bench was asked: `variants` (name, path) in the order given, `count`
    (per run) and `rounds`."""

    def __init__(self, variants: list[tuple[str, str]], count: int, rounds: int,
                 switches: dict[str, bool] | None = None) -> None:
        self.variants, self.count, self.rounds = variants, count, rounds
        self.switches = switches or {}


def parse_side_by_side(doc: str | None, *, variant: str, variant_help: str, count: str, count_default: int,
                       rounds_default: int = 5, switches: tuple[tuple[str, str], ...] = (),
                       argv: list[str] | None = None) -> SideBySide:
    """Parses `--<variant> NAME=PATH` (repeated, at least one), `--<count> N`, `--rounds N` and
    each `--<switch>` of `switches` ((name, help) of an on/off option); `doc` is the bench's
    description (its module docstring)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(f"--{variant}", action="append", required=True, metavar="NAME=PATH",
                        help=f"NAME=PATH of {variant_help} (repeat)")
    parser.add_argument(f"--{count}", type=int, default=count_default)
    parser.add_argument("--rounds", type=int, default=rounds_default)
    for switch, switch_help in switches:
        parser.add_argument(f"--{switch}", action="store_true", help=switch_help)
    options = parser.parse_args(argv)
    variants: list[tuple[str, str]] = []
    for item in getattr(options, variant):
        name, equals, path = item.partition("=")
        if not equals or not name or not path:
            parser.error(f"--{variant} takes NAME=PATH, not {item!r}")
        if any(name == seen for seen, _ in variants):
            parser.error(f"--{variant}: the name {name!r} is given twice")
        variants.append((name, path))
    for option, value in ((count, getattr(options, count)), ("rounds", options.rounds)):
        if value < 1:
            parser.error(f"--{option} must be at least 1")
    return SideBySide(variants, getattr(options, count), options.rounds,
                      {switch: getattr(options, switch.replace("-", "_")) for switch, _ in switches})
