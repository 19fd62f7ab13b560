"""What a fork needs of its source, read from the transcript's ends instead of a scan (format §4.8).

`SourceEnds.read(files, end)` asks the Rust core (`_native.fork_source_of`) for the header's cwd,
where the body starts, where the kept bytes end (a torn tail stays out), the leaf (the last valid
entry line) and the latest `session_info` name, each decided as the scan decides it, from the
transcript's first `end` bytes. None means only a scan can be sure (a legacy file, no header
first, a header among the last lines): the caller opens the session instead.

It answers what `lineage.lineage_meta` and the fork's naming ask of a source (`id`, `name`,
`meta`, `model`, `git_branch`) without the session's index: the model is the last one on the
leaf's path, followed backwards by `parentId` within the last 16 MiB (beyond that none is
recorded; whoever opens the fork reads it from the transcript, as from the source), and a fresh entry
id is one whose JSON string the source's body does not hold (searched for in the same pass as
the name, on one thread: the kernel copies on the other core).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..storage.ids import fresh_entry_id, new_uuid
from .files import SessionFiles

_CANDIDATES = 8
"""Fresh ids offered to the pass: that all eight are taken is beyond any real file."""


class SourceEnds:
    """The facts of a fork's source transcript, as of its first `end` bytes."""

    __slots__ = ("files", "cwd", "body_start", "body_end", "adds_newline", "leaf_id", "_info_name", "_model",
                 "_fresh_id", "_meta")

    def __init__(self, files: SessionFiles, cwd: str, body_start: int, body_end: int, adds_newline: bool,
                 leaf_id: str | None, info_name: str | None, model: str | None, fresh_id: str | None) -> None:
        self.files, self.cwd, self.body_start, self.body_end = files, cwd, body_start, body_end
        self.adds_newline, self.leaf_id, self._info_name, self._model = adds_newline, leaf_id, info_name, model
        self._fresh_id = fresh_id
        self._meta: dict[str, Any] | None = None

    @classmethod
    def read(cls, files: SessionFiles, end: int) -> SourceEnds | None:
        """The facts of `files.transcript`'s first `end` bytes, None when only a scan can be sure.

        Raises:
            CommandcodeError: the transcript cannot be read (the core's error).
        """
        from .._native import fork_source_of

        prefix = fresh_entry_id()[:4]  # one shared prefix: the pass searches for it once
        candidates = [prefix + fresh_entry_id()[4:] for _ in range(_CANDIDATES)]
        found = fork_source_of(files.transcript, end, candidates)
        return None if found is None else cls(files, *found)

    @property
    def id(self) -> str:
        return self.files.session_id

    @property
    def path(self) -> Path:
        return self.files.transcript

    @property
    def meta(self) -> dict[str, Any]:
        if self._meta is None:
            from .meta import read_meta

            self._meta = read_meta(self.files.meta)
        return self._meta

    @property
    def name(self) -> str | None:
        """The latest `session_info` name, else `meta.title` (`facts.display_name`)."""
        from .facts import display_name

        return display_name(self._info_name, self.meta)

    @property
    def model(self) -> str | None:
        """The model the leaf's path last used, when the core found it near the end."""
        return self._model

    @property
    def git_branch(self) -> str | None:
        value = self.meta.get("gitBranch")
        return value if isinstance(value, str) else None

    def fresh_entry_id(self) -> str:
        """An 8-hex entry id whose JSON string occurs nowhere in the kept bytes, found in the same
        pass as the name; a full uuid when all the candidates are taken (as `ids.new_entry_id`
        gives one after its retries)."""
        return self._fresh_id or new_uuid()
