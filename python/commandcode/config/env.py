"""Every `COMMANDCODE_*` variable commandcode reads, in one place, with one rule for flags.

- `COMMANDCODE_HOME` — the data dir (`config.paths.data_root`); empty counts as unset.
- `COMMANDCODE_INDEX` — a flag; off disables the index sidecars (for measuring cold opens).
- `COMMANDCODE_FAST_PATH` — a flag; off sends every command through typer (the tests compare
  both paths).

A flag is off when its value, trimmed and compared case-insensitively, is `off`, `0`, `false` or
`no`; anything else (unset included) is on. Values are read when asked for, never cached at
import, so a process that changes its environment sees the change. No other module reads a
`COMMANDCODE_*` variable (tests/test_layers.py checks it).
"""

from __future__ import annotations

import os

HOME = "COMMANDCODE_HOME"
INDEX = "COMMANDCODE_INDEX"
FAST_PATH = "COMMANDCODE_FAST_PATH"

_OFF = frozenset({"off", "0", "false", "no"})


def flag_enabled(name: str) -> bool:
    """Whether the flag `name` is on (unset: on)."""
    return os.environ.get(name, "").strip().lower() not in _OFF


def home_override() -> str | None:
    """`$COMMANDCODE_HOME`, or `None` when unset or empty."""
    return os.environ.get(HOME) or None


def index_enabled() -> bool:
    """Whether index sidecars may be read and written (`COMMANDCODE_INDEX=off` disables them)."""
    return flag_enabled(INDEX)


def fast_path_enabled() -> bool:
    """Whether the argv fast path may run a command (`COMMANDCODE_FAST_PATH=off` disables it)."""
    return flag_enabled(FAST_PATH)
