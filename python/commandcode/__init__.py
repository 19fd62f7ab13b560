"""commandcode: the session and checkpoint engine of an AI coding agent, file-compatible with the
Command Code CLI.

The library API is small and typed: open and inspect sessions (`open_session`, `Session`,
`Context`), find them (`list_sessions`, `resolve_session`), write them (`SessionWriter`), and the
error hierarchy (`commandcode.errors`). The CLI (`commandcode.cli`) is built on the same calls.

Names are imported on first use (PEP 562), so `import commandcode` costs almost nothing and an
embedder that only opens a session never loads the writer, the catalog or the checkpoint code.
"""

from ._native import __version__ as __version__

TYPE_CHECKING = False  # `typing` costs more to import than a warm open; checkers see the imports
if TYPE_CHECKING:
    from typing import Any

    from .catalog.listing import SessionSummary, list_sessions, resolve_session
    from .config.paths import data_dir, project_dir
    from .errors import CommandcodeError
    from .sessions.context import Context
    from .sessions.files import SessionFiles
    from .sessions.reader import Session, open_session
    from .sessions.writer import SessionWriter

_HOMES = {
    "CommandcodeError": ".errors",
    "Context": ".sessions.context",
    "Session": ".sessions.reader",
    "SessionFiles": ".sessions.files",
    "SessionSummary": ".catalog.listing",
    "SessionWriter": ".sessions.writer",
    "data_dir": ".config.paths",
    "list_sessions": ".catalog.listing",
    "open_session": ".sessions.reader",
    "project_dir": ".config.paths",
    "resolve_session": ".catalog.listing",
}

__all__ = sorted([*_HOMES, "__version__"])


def __getattr__(name: str) -> "Any":
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'commandcode' has no attribute {name!r}")
    # `__import__` with a `fromlist` returns the submodule itself; `importlib.import_module` would
    # cost more to import (with `warnings`) than the rest of a warm session open
    value = getattr(__import__(__name__ + home, fromlist=[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
