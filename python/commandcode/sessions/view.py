"""`SessionView`: the read-only shape every session reader offers, whatever wrote the file.

`sessions.reader.Session` (Command Code v3 transcripts) implements it; the Claude Code and pi
readers of a later issue will too, so that `show`, `context`, `tree` and a resume picker work on
any of them. Kept out of the open path (it imports `typing`); a test checks `Session` against it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from .context import Context
from .reader_values import Header, TreeRow


@runtime_checkable
class SessionView(Protocol):
    """A session as commands read it: header, listing fields, tree, context, entries."""

    @property
    def id(self) -> str: ...

    @property
    def header(self) -> Header: ...

    # Listing fields (ref §9)
    @property
    def name(self) -> str | None: ...

    @property
    def cwd(self) -> str: ...

    @property
    def created(self) -> str: ...

    @property
    def modified(self) -> str: ...

    @property
    def message_count(self) -> int: ...

    @property
    def leaf_id(self) -> str | None: ...

    @property
    def model(self) -> str | None: ...

    @property
    def entry_count(self) -> int: ...

    def first_message(self) -> str | None: ...

    def tree_rows(self, start: int = 0, stop: int | None = None) -> Iterator[TreeRow]: ...

    def context(self) -> Context: ...

    def entries(self, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        """The full entries at positions `[start, stop)` in file order."""
        ...
