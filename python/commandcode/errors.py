"""The one exception hierarchy of commandcode.

Every failure a user can cause or meet is a `CommandcodeError` with a one-line message; the CLI
prints that line (and `hint`, when set) and exits 1. I/O failures stay `OSError` subclasses with
`filename` set. The native extension raises these same classes.
"""

from __future__ import annotations


class CommandcodeError(Exception):
    """Base class. `hint` is an optional second line telling the user what to do. `problems` is
    `(path, code, message)` for each file that stopped an operation on many files (a refused
    restore: `BackupIntegrityError`, `RestoreError`, `ChangedOutsideError`), else empty; the
    native extension passes it to the constructor like any other caller."""

    hint: str | None = None
    problems: list[tuple[str, str, str]]

    def __init__(
        self, message: str, *, hint: str | None = None, problems: list[tuple[str, str, str]] | None = None
    ) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint
        self.problems = [] if problems is None else list(problems)


class UnsupportedFormatError(CommandcodeError):
    """A transcript uses a format version newer than this build understands."""

    hint = "upgrade commandcode; the file was left untouched"


class SessionChangedError(CommandcodeError):
    """A transcript changed on disk between scanning it and reading an entry."""

    hint = "run the command again"


class SessionNotFoundError(CommandcodeError):
    """No session matches a reference (id, id prefix, name or path)."""


class AmbiguousSessionError(CommandcodeError):
    """A reference matches more than one session."""


class SessionLockedError(CommandcodeError):
    """Another process holds the transcript open for writing."""

    def __init__(
        self,
        message: str,
        *,
        holder_pid: int | None = None,
        hint: str | None = None,
        problems: list[tuple[str, str, str]] | None = None,
    ) -> None:
        super().__init__(message, hint=hint, problems=problems)
        self.holder_pid = holder_pid


class InvalidSessionError(CommandcodeError):
    """A session's files cannot be used as asked (no transcript, unknown entry, bad meta)."""


class UsageError(CommandcodeError):
    """The caller asked for something that cannot be done (bad option values, bad input)."""


class BackupIntegrityError(CommandcodeError):
    """A backup object is missing, does not decompress, or does not hash to its name."""


class RestoreError(CommandcodeError):
    """A rewind could not be carried out; nothing (or everything) was put back, never half."""


class CheckpointError(CommandcodeError):
    """A checkpoint could not be recorded or read."""


class TurnInterrupted(CommandcodeError):
    """The user interrupted a running turn (Esc, Ctrl+C): the model stopped streaming, a running
    `bash` command's process group was killed, and nothing of the turn was committed."""

    hint = "nothing of that turn was saved; send the prompt again to retry"


class ProviderError(CommandcodeError):
    """A model provider failed a request (HTTP status, connection, timeout, a cut stream) or is
    configured wrongly. The message is one line; no API key is ever part of it."""


class SettingsError(CommandcodeError):
    """A settings file cannot be read or changed: malformed JSON (the message names the file,
    line and column), not a regular file, or a key whose current value is in the way of a write.
    The file is left as it is."""


__all__ = [
    "AmbiguousSessionError",
    "BackupIntegrityError",
    "CheckpointError",
    "CommandcodeError",
    "InvalidSessionError",
    "ProviderError",
    "RestoreError",
    "SessionChangedError",
    "SessionLockedError",
    "SessionNotFoundError",
    "SettingsError",
    "ShareServiceError",
    "TurnInterrupted",
    "UnsupportedFormatError",
    "UsageError",
]


class ChangedOutsideError(RestoreError):
    """A rewind would overwrite files changed outside the tracked tools; nothing was written.

    `problems` lists `(path, code, message)` for each such file.
    """

    hint = "review those files, then pass --force to overwrite them"


__all__.append("ChangedOutsideError")


class ShareServiceError(CommandcodeError):
    """The team share service refused a request, or its store (SQLite, PostgreSQL) failed one.
    `status` is the HTTP status the service answers with (503: the store is unavailable, read-only
    or failed mid-transaction; nothing of the request was kept)."""

    def __init__(self, message: str, *, status: int = 503, hint: str | None = None,
                 problems: list[tuple[str, str, str]] | None = None) -> None:
        super().__init__(message, hint=hint, problems=problems)
        self.status = status
