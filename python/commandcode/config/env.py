"""Every `COMMANDCODE_*` variable commandcode reads, in one place, with one rule for flags.

- `COMMANDCODE_HOME` — the data dir (`config.paths.data_root`); empty counts as unset.
- `COMMANDCODE_INDEX` — a flag; off disables the index sidecars (for measuring cold opens).
- `COMMANDCODE_FAST_PATH` — a flag; off sends every command through typer (the tests compare
  both paths).
- `COMMANDCODE_CATALOG` — a flag; off makes listings and searches skip the SQLite catalog and
  scan the project folders directly (the benches compare both).
- `COMMANDCODE_SCRATCHPAD_BASE` — the real CLI's scratchpad base (an absolute path), read to
  find a session's scratchpad when the session is deleted.
- `COMMANDCODE_DEBUG` — opt-in (`1`, `true`, `yes`, `on`): an unexpected error shows its
  traceback instead of the one `error: internal error` line.
- `COMMANDCODE_TEST_STEP_DELAY_MS` — a test hook: milliseconds a rewind waits before each
  restore step (the signal tests aim at that window).

A flag is off when its value, trimmed and compared case-insensitively, is `off`, `0`, `false` or
`no`; anything else (unset included) is on. An opt-in flag is on only when it is `1`, `true`,
`yes` or `on` (the same trimming). Values are read when asked for, never cached at
import, so a process that changes its environment sees the change. No other module reads a
`COMMANDCODE_*` variable (tests/test_layers.py checks it).
"""

from __future__ import annotations

import os

HOME = "COMMANDCODE_HOME"
INDEX = "COMMANDCODE_INDEX"
FAST_PATH = "COMMANDCODE_FAST_PATH"
DEBUG = "COMMANDCODE_DEBUG"
CATALOG = "COMMANDCODE_CATALOG"
SCRATCHPAD_BASE = "COMMANDCODE_SCRATCHPAD_BASE"
TEST_STEP_DELAY_MS = "COMMANDCODE_TEST_STEP_DELAY_MS"

_OFF = frozenset({"off", "0", "false", "no"})
_ON = frozenset({"1", "true", "yes", "on"})


def flag_enabled(name: str) -> bool:
    """Whether the flag `name` is on (unset: on)."""
    return os.environ.get(name, "").strip().lower() not in _OFF


def opt_in(name: str) -> bool:
    """Whether the opt-in flag `name` is set (unset: off)."""
    return os.environ.get(name, "").strip().lower() in _ON


def home_override() -> str | None:
    """`$COMMANDCODE_HOME`, or `None` when unset or empty."""
    return os.environ.get(HOME) or None


def set_home(path: str) -> None:
    """Sets `$COMMANDCODE_HOME` for this process and its children (a relative one made absolute)."""
    os.environ[HOME] = path


def index_enabled() -> bool:
    """Whether index sidecars may be read and written (`COMMANDCODE_INDEX=off` disables them)."""
    return flag_enabled(INDEX)


def fast_path_enabled() -> bool:
    """Whether the argv fast path may run a command (`COMMANDCODE_FAST_PATH=off` disables it)."""
    return flag_enabled(FAST_PATH)


def catalog_enabled() -> bool:
    """Whether listings may use the SQLite catalog (`COMMANDCODE_CATALOG=off` scans folders instead)."""
    return flag_enabled(CATALOG)


def scratchpad_base() -> str | None:
    """`$COMMANDCODE_SCRATCHPAD_BASE` when it is an absolute path (the real CLI's rule), else None."""
    value = os.environ.get(SCRATCHPAD_BASE, "")
    return value if os.path.isabs(value) else None


def debug_enabled() -> bool:
    """Whether an unexpected error shows its traceback (`COMMANDCODE_DEBUG=1`)."""
    return opt_in(DEBUG)


def test_step_delay_ms() -> int | None:
    """The rewind test hook `COMMANDCODE_TEST_STEP_DELAY_MS`, when it is a whole number."""
    delay = os.environ.get(TEST_STEP_DELAY_MS, "").strip()
    return int(delay) if delay.isdigit() else None
