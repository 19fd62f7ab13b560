"""Every `COMMANDCODE_*` variable commandcode reads, in one place, with one rule for flags.

- `COMMANDCODE_HOME` — the data dir (`config.paths.data_root`); empty counts as unset.
- `COMMANDCODE_INDEX` — a flag; off disables the index sidecars (for measuring cold opens).
- `COMMANDCODE_FAST_PATH` — a flag; off sends every command through typer (the tests compare
  both paths).
- `COMMANDCODE_CATALOG` — a flag; off makes listings and searches skip the SQLite catalog and
  scan the project folders directly (the benches compare both).
- `COMMANDCODE_DEBUG` — opt-in (`1`, `true`, `yes`, `on`): an unexpected error shows its
  traceback instead of the one `error: internal error` line.
- `COMMANDCODE_SCRATCHPAD_BASE` — an absolute folder that holds the scratchpads instead of `/tmp`
  (the real CLI's variable: the base becomes `<it>/commandcode-<uid>`); a relative value is ignored.
- `COMMANDCODE_SCRATCHPAD` — not read: exported to the tools' shell commands, naming the session's
  scratchpad (`scratchpad_export`).
- `COMMANDCODE_PROVIDER_TIMEOUT` — seconds an HTTP model provider may stay silent (connect, or
  between two reads of a streamed reply) before the request is reported as timed out (300).
- `COMMANDCODE_PROVIDER_RETRIES` — how many times a rate-limited (HTTP 429) request is retried (3).
- `COMMANDCODE_SKIP_PROMPT_HISTORY` — opt-in: the interactive shell records no prompt in
  `history.jsonl` (it still reads it for the up-arrow).
- `COMMANDCODE_OFFLINE_TOKEN_MS` — milliseconds the built-in offline model waits before each chunk
  of its streamed reply (default 0: as fast as it can), so its replies stream as a served
  model's do (demos, and the shell's streaming tests).
- `COMMANDCODE_TEST_*` — test hooks: every one is listed, documented and read in
  `config/testing_hooks.py`, never here.

A flag is off when its value, trimmed and compared case-insensitively, is `off`, `0`, `false` or
`no`; anything else (unset included) is on. An opt-in flag is on only when it is `1`, `true`,
`yes` or `on` (the same trimming). Values are read when asked for, never cached at
import, so a process that changes its environment sees the change. No other module reads a
`COMMANDCODE_*` variable but `testing_hooks.py` its test hooks, and the package's `__init__` the
two a warm session open reads (`COMMANDCODE_HOME`, `COMMANDCODE_INDEX`) with the flag rule, so
that an open need not import this module; they are re-exported here (tests/unit/test_layers.py
checks both).
"""

import os

from . import HOME as HOME
from . import INDEX as INDEX
from . import flag_enabled as flag_enabled
from . import home_override as home_override
from . import index_enabled as index_enabled
from . import set_home as set_home

FAST_PATH = "COMMANDCODE_FAST_PATH"
DEBUG = "COMMANDCODE_DEBUG"
CATALOG = "COMMANDCODE_CATALOG"
OFFLINE_TOKEN_MS = "COMMANDCODE_OFFLINE_TOKEN_MS"
SCRATCHPAD_BASE = "COMMANDCODE_SCRATCHPAD_BASE"
SCRATCHPAD = "COMMANDCODE_SCRATCHPAD"
PROVIDER_TIMEOUT = "COMMANDCODE_PROVIDER_TIMEOUT"
PROVIDER_RETRIES = "COMMANDCODE_PROVIDER_RETRIES"
SKIP_PROMPT_HISTORY = "COMMANDCODE_SKIP_PROMPT_HISTORY"

_ON = frozenset({"1", "true", "yes", "on"})


def opt_in(name: str) -> bool:
    """Whether the opt-in flag `name` is set (unset: off)."""
    return os.environ.get(name, "").strip().lower() in _ON


def fast_path_enabled() -> bool:
    """Whether the argv fast path may run a command (`COMMANDCODE_FAST_PATH=off` disables it)."""
    return flag_enabled(FAST_PATH)


def catalog_enabled() -> bool:
    """Whether listings may use the SQLite catalog (`COMMANDCODE_CATALOG=off` scans folders instead)."""
    return flag_enabled(CATALOG)


def debug_enabled() -> bool:
    """Whether an unexpected error shows its traceback (`COMMANDCODE_DEBUG=1`)."""
    return opt_in(DEBUG)


def skip_prompt_history() -> bool:
    """Whether prompts stay out of `history.jsonl` (`COMMANDCODE_SKIP_PROMPT_HISTORY=1`)."""
    return opt_in(SKIP_PROMPT_HISTORY)


def whole_number(name: str) -> "int | None":
    """The variable `name` as a whole number (trimmed), or None when it is unset or anything else."""
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() else None


def offline_token_seconds() -> float:
    """`COMMANDCODE_OFFLINE_TOKEN_MS` in seconds, when it is a whole number (else 0)."""
    delay = whole_number(OFFLINE_TOKEN_MS)
    return delay / 1000 if delay is not None else 0.0


def scratchpad_base() -> "str | None":
    """`$COMMANDCODE_SCRATCHPAD_BASE` when it is an absolute path (the real CLI ignores anything else)."""
    base = os.environ.get(SCRATCHPAD_BASE, "")
    return base if base and os.path.isabs(base) else None


def scratchpad_export(path: str) -> "dict[str, str]":
    """The environment a tool's shell command gets for the scratchpad at `path`."""
    return {SCRATCHPAD: path}
def provider_timeout_seconds() -> float:
    """`COMMANDCODE_PROVIDER_TIMEOUT` as positive seconds (default 300)."""
    try:
        value = float(os.environ.get(PROVIDER_TIMEOUT, "").strip())
    except ValueError:
        return 300.0
    return value if 0 < value < float("inf") else 300.0


def provider_retries() -> int:
    """`COMMANDCODE_PROVIDER_RETRIES` as a whole number (default 3)."""
    value = whole_number(PROVIDER_RETRIES)
    return min(value, 20) if value is not None else 3
