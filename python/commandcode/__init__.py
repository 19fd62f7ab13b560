"""commandcode: the session and checkpoint engine of an AI coding agent, file-compatible with the
Command Code CLI.

The library API is small and typed: open and inspect sessions (`open_session`, `Session`,
`Context`), find them (`list_sessions`, `resolve_session`), write them (`SessionWriter`), and the
error hierarchy (`commandcode.errors`). The CLI (`commandcode.cli`) is built on the same calls.
"""

from __future__ import annotations

from ._native import __version__
from .catalog import SessionSummary, list_sessions, resolve_session
from .errors import CommandcodeError
from .paths import SessionFiles, data_dir, project_dir
from .session import Context, Session, open_session
from .writer import SessionWriter

__all__ = [
    "CommandcodeError",
    "Context",
    "Session",
    "SessionFiles",
    "SessionSummary",
    "SessionWriter",
    "__version__",
    "data_dir",
    "list_sessions",
    "open_session",
    "project_dir",
    "resolve_session",
]
