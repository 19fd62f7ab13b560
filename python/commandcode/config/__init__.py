"""Core: where commandcode's data lives and how it is configured — `paths` (the data dir and
our folders in it), `env` (every `COMMANDCODE_*` variable), `slug` (project folder names) and
`settings` (the layered settings files).

Owns what opening a session by its path needs of all that, and nothing else: the data root
(`data_root`: `$COMMANDCODE_HOME`, else `$HOME/.commandcode`), the index sidecars' folder in it
(`index_root`) and whether they are on (`index_enabled`: `$COMMANDCODE_INDEX`, read with the one
rule for flags, `flag_enabled`), and the transcript suffix. A warm open imports this package,
which it cannot avoid, and neither `env` nor `paths`: each module costs it ~0.3M instructions of
import machinery before its own code runs (callgrind, issue 30). `env` and `paths` re-export
these names, and the rest of the package and its callers use them from there. Imports nothing
but `os`; the layered settings live in `commandcode.config.settings` (which imports `json`, and
is therefore never loaded by `import commandcode` or by opening a session).
"""

import os

HOME = "COMMANDCODE_HOME"
INDEX = "COMMANDCODE_INDEX"
TRANSCRIPT_SUFFIX = ".jsonl"

_OFF = frozenset({"off", "0", "false", "no"})


def flag_enabled(name: str) -> bool:
    """Whether the flag `name` is on (unset: on)."""
    return os.environ.get(name, "").strip().lower() not in _OFF


def index_enabled() -> bool:
    """Whether index sidecars may be read and written (`COMMANDCODE_INDEX=off` disables them)."""
    return flag_enabled(INDEX)


def home_override() -> "str | None":
    """`$COMMANDCODE_HOME`, or `None` when unset or empty."""
    return os.environ.get(HOME) or None


def set_home(path: str) -> None:
    """Sets `$COMMANDCODE_HOME` for this process and its children (a relative one made absolute)."""
    os.environ[HOME] = path


def data_root() -> str:
    """The root of all session data, as a string (`paths.data_dir()` is its `Path`)."""
    override = home_override()
    if override:
        if not os.path.isabs(override):
            # Made absolute once, against the directory the process started in, and written back:
            # every later call (after a chdir too) and every child process see the same folder.
            # Relative, the restore journal and its sources named paths no recovery could open.
            override = os.path.abspath(override)
            set_home(override)
        return override
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or os.path.expanduser("~")
    if not os.path.isabs(home):  # a relative $HOME, made absolute once as well
        home = _absolute_homes.setdefault(home, os.path.abspath(home))
    return os.path.join(home, ".commandcode")


_absolute_homes: dict[str, str] = {}  # a relative $HOME as given -> as first resolved


def index_root() -> str:
    """`<data dir>/index`: index sidecars (a cache; safe to delete), as a string."""
    return os.path.join(data_root(), "index")
