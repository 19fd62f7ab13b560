"""Reading a session: the facade over the native scanner and tree (format §4, §9).

`open_session(path)` scans a transcript (through its index sidecar unless
`COMMANDCODE_INDEX=off`), migrates a legacy v1/v2 file first as the real CLI does, and returns a
`Session`: typed header, listing fields, the active path, and the model context rebuilt exactly
as the real CLI rebuilds it on resume. The native index stays private (`Session._index`): what
callers need is a property or method here. Nothing here modifies a v3 transcript.
"""

import os

from .. import _native
from ..config import index_enabled, index_root  # the package's own: no `config.env`, `config.paths`
from .context import Context, build_messages, content_blocks
from .files import SessionFiles

# A warm open of a 1 GB session takes a few milliseconds; importing `typing`, `pathlib`,
# `dataclasses` or `json` takes longer than that, so this module (the one an embedder imports to
# open a session) uses none of them at import time; checkers still see the annotations' types.
# An annotation that is more than a name is a string: evaluated, each `str | None` or
# `dict[str, str]` builds a union or a generic alias when its `def` runs (~0.14M instructions of
# a warm open for this module's 28; `from __future__ import annotations` would import a module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

    from .reader_values import Anomalies, Header, SkippedLine, TreeRow

__all__ = ["Anomalies", "Context", "Header", "Session", "SkippedLine", "TreeRow", "open_session"]
_RECORDS = frozenset({"Anomalies", "Header", "SkippedLine", "TreeRow"})


def __getattr__(name: str) -> object:
    """The typed values of `reader_values.py`, importable from here; loaded when first asked for
    (a warm open that builds only the context never needs them)."""
    if name in _RECORDS:
        from . import reader_values

        return getattr(reader_values, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def index_path_for(files: SessionFiles) -> str:
    """Where the index sidecar of a session lives (a cache outside the real CLI's folders)."""
    return os.path.join(index_root(), os.path.basename(files.folder), f"{files.session_id}.idx")


def scan(files: SessionFiles, *, use_index: bool = True, tail: bool = True) -> "_native.SessionIndex":
    """Scans a transcript, through its index sidecar when enabled (and `use_index`).

    With `tail` (the default), a first contact reads the transcript's end first and the rest only
    when something beyond the context is asked for; a caller that will need the whole file (its
    counts, skipped lines, every entry, whether an id is taken) passes `tail=False` and has it
    scanned at once, or loaded from a sidecar that describes it, without that first read.
    """
    transcript = files.sidecar_path(".jsonl")
    if not use_index or not index_enabled():
        return _native.scan_session(transcript, None, tail)
    sidecar = index_path_for(files)
    if not os.path.isdir(os.path.dirname(sidecar)):
        from ..storage.durable import ensure_dir

        try:
            ensure_dir(os.path.dirname(sidecar))
        except OSError:
            return _native.scan_session(transcript, None, tail)
    return _native.scan_session(transcript, sidecar, tail)


def scan_format(files: SessionFiles) -> "str | None":
    """The format (`"v3"`, `"v2"`, `"v1"`) of the transcript as it is on disk now: a fresh scan,
    never the index sidecar (a migration decides on it under the writer lock)."""
    return scan(files, use_index=False).format


def open_session(transcript: "Path | str", *, use_index: bool = True, tail: bool = True) -> "Session":
    """Opens the session whose transcript is at `transcript` (through its index sidecar unless
    `use_index` is False: the catalog scans small transcripts without writing one). `tail=False`:
    the caller needs the whole file, not only the context (see `scan`).

    Raises:
        InvalidSessionError: there is no transcript at that path.
        UnsupportedFormatError: the transcript declares a newer format version (left untouched).
        SessionLockedError: a legacy transcript stayed locked by another process while waiting to
            migrate it (left untouched).
        OSError: the transcript cannot be read, or a legacy one cannot be migrated (left untouched).
    """
    path = os.fspath(transcript)
    files = SessionFiles.for_transcript(path)
    if not os.path.isfile(path):
        from ..errors import InvalidSessionError  # its 16 classes cost a tenth of a warm open

        raise InvalidSessionError(f"no transcript at {path}", hint="run `commandcode sessions list` to see sessions")
    if os.path.lexists(files.unsynced_record):
        from .unsynced import settle  # a fork whose body the disk may not hold yet (format §4.8)

        settle(files.transcript)
    index = scan(files, use_index=use_index, tail=tail)
    if index.format in ("v1", "v2"):
        from .migrate import migrate_legacy  # rare path: keep it out of the common import

        migrate_legacy(files)
        index = scan(files, tail=tail)
    return Session(files, index)


class Session:
    """A scanned session. Cheap to create; payloads are read from disk only when asked for.

    Implements `sessions.view.SessionView`.
    """

    def __init__(self, files: SessionFiles, index: "_native.SessionIndex") -> None:
        self.files = files
        self._index = index
        self._meta: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        """The session id: the transcript's file name (never the header's `id`, see format §2)."""
        return self.files.session_id

    @property
    def path(self) -> "Path":
        return self.files.transcript

    @property
    def format(self) -> "str | None":
        """The transcript's format as scanned: `"v3"` once open (legacy files are migrated)."""
        return self._index.format

    @property
    def meta(self) -> "dict[str, Any]":
        if self._meta is None:
            from .meta import read_meta  # json and friends: only when a meta field is asked for

            self._meta = read_meta(self.files.meta)
        return self._meta

    @property
    def header(self) -> "Header":
        """The header; synthesized as the real CLI does when the file has none (format §4.5)."""
        from .format import header_timestamp
        from .reader_values import Header

        header = self._index.header
        if header is not None:
            return Header.from_native(header)
        timestamp = header_timestamp(self.meta.get("createdAt"), self.files.sidecar_path(".jsonl"))
        return Header(self.id, timestamp, os.getcwd(), synthesized=True)

    @property
    def cwd(self) -> str:
        return self.header.cwd

    @property
    def leaf_id(self) -> "str | None":
        return self._index.leaf_id

    @property
    def name(self) -> "str | None":
        """The latest `session_info` name, else `meta.title` (`facts.display_name`)."""
        from .facts import display_name

        return display_name(self._index.name, self.meta)

    @property
    def model(self) -> "str | None":
        return self._index.model

    @property
    def effort(self) -> "str | None":
        return self._index.effort

    @property
    def message_count(self) -> int:
        return self._index.message_count

    @property
    def entry_count(self) -> int:
        """Entries in the file (the header and skipped lines not counted)."""
        return self._index.entry_count

    @property
    def created(self) -> str:
        """File birthtime when the OS reports one, else the header timestamp."""
        from ..storage.ids import iso_from_ms  # not needed to open a session

        birth = getattr(self.path.stat(), "st_birthtime", None)
        return iso_from_ms(int(birth * 1000)) if birth is not None else self.header.timestamp

    @property
    def modified(self) -> str:
        """The newest entry timestamp, else the file's mtime."""
        from ..storage.ids import iso_from_ms, parse_iso

        newest = self._index.last_timestamp
        if newest and parse_iso(newest) is not None:
            return newest
        return iso_from_ms(int(self.path.stat().st_mtime * 1000))

    @property
    def entrypoint(self) -> "str | None":
        value = self.meta.get("entrypoint")
        return value if isinstance(value, str) else None

    @property
    def parent_session_id(self) -> "str | None":
        value = self.meta.get("parentSessionId")
        return value if isinstance(value, str) else None

    @property
    def git_branch(self) -> "str | None":
        value = self.meta.get("gitBranch")
        return value if isinstance(value, str) else None

    @property
    def skipped_lines(self) -> "list[SkippedLine]":
        """Torn or corrupt lines the scan skipped, in file order."""
        from .reader_values import SkippedLine

        return [SkippedLine.from_native(value) for value in self._index.skipped]

    @property
    def anomalies(self) -> "Anomalies":
        from .reader_values import Anomalies

        return Anomalies.from_native(self._index.anomalies)

    @property
    def index_source(self) -> "str | None":
        """How the scan was made: `"loaded"` from the index sidecar, else a fresh scan (benches)."""
        source = getattr(self._index, "source", None)
        return source if isinstance(source, str) else None

    @property
    def scanned_size(self) -> int:
        """The transcript's size when scanned: skipped lines and entries lie within it."""
        return self._index.file_size

    def ends_with_newline(self) -> bool:
        """Whether the file ended in `\\n` when scanned (the writer ends a torn tail first)."""
        return self._index.ends_with_newline

    def has_entry(self, entry_id: str) -> bool:
        """Whether an entry id is taken in the file (answered from the index's id hashes)."""
        return entry_id in self._index  # answered from the index's id hashes, without raising

    def parent_of(self, entry_id: str) -> "str | None":
        """The parent id of an entry (None for a root).

        Raises:
            KeyError: no such entry.
        """
        return self._index.envelope(entry_id)[1]

    def first_message(self) -> "str | None":
        """The first visible user text in the file."""
        for entry in self._index.read_first_users(8):
            message = entry.get("message")
            for block in content_blocks(message.get("content") if isinstance(message, dict) else None):
                if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                    return str(block["text"])
        return None

    def message_id_map(self) -> "dict[str, str]":
        """`meta.messageId` → entry id for every message entry (checkpoints point at messages)."""
        return dict(self._index.message_ids())

    def labels(self) -> "dict[str, str]":
        """entry id → its current label (format §4.3 `label` entries)."""
        return dict(self._index.labels())

    def read_entries(self, entry_ids: "list[str]") -> "list[dict[str, Any]]":
        """The full JSON objects of these entries, in the order given."""
        return list(self._index.read_entries(entry_ids))

    def _clamp(self, start: int, stop: "int | None") -> "tuple[int, int]":
        count = self._index.entry_count
        start = min(max(start, 0), count)
        return start, count if stop is None else min(max(stop, start), count)

    def entries(self, start: int = 0, stop: "int | None" = None) -> "Iterator[dict[str, Any]]":
        """The full entries at positions `[start, stop)` in file order (an id that names several
        entries names its last one, as the tree walk does); bounds are clamped like `tree_rows`'."""
        ids = [row[0] for row in self._index.tree_rows(*self._clamp(start, stop))]
        yield from self._index.read_entries(ids)

    def context(self) -> Context:
        """The messages the model sees on resume (format §4.4), with the entries behind them."""
        entry_ids, _compaction_id, strip_until = self._index.context_plan()
        messages = build_messages(self._index.read_context(), strip_until)
        return Context(self.leaf_id, list(entry_ids), messages)

    def context_plan(self) -> "tuple[list[str], int]":
        """The entry ids of `context()` in context order, and how many of the first ones lose
        their thinking blocks (a compaction's `stripThinkingFromKept`): an export reads them in
        chunks instead of all at once."""
        entry_ids, _compaction_id, strip_until = self._index.context_plan()
        return list(entry_ids), strip_until

    def path_ids(self) -> "list[str]":
        """Entry ids of the active path, root first."""
        return list(self._index.path_ids())

    def tree_table(self, start: int = 0, stop: "int | None" = None) -> (
            "tuple[list[tuple[str, str | None, str, str, int]], list[tuple[str | None, bool, int]]]"):
        """Entries `[start, stop)` as the index holds them, in file order, without building a
        `TreeRow` each: `(id, parent_id, type, timestamp, line)` and, aligned with it,
        `(role, is_meta, line length)` (role `None` for entries other than messages)."""
        start, stop = self._clamp(start, stop)
        return self._index.tree_rows(start, stop), self._index.tree_details(start, stop)

    def tree_layout(self, hidden: "list[str]", filter: str = "default") -> "tuple[bytes, bytes, bytes, bytes]":
        """A navigator's rows, laid out natively: `(order, depth, flags, size)` as packed
        little-endian u32 (flags a byte per row: 1 on the active path, 2 has children), entries of
        the `hidden` types and those `filter` hides ("no tools": messages that are only tool calls
        or results; "user only": all but the user's own prompts) left out, from the scan's
        per-entry facts (see `rust/src/layout.rs`)."""
        return self._index.tree_layout(hidden, filter)

    def position(self, entry_id: str) -> "int | None":
        """The file-order position of the entry an id names (its last one), or None."""
        return self._index.position(entry_id)

    def tree_rows(self, start: int = 0, stop: "int | None" = None) -> "Iterator[TreeRow]":
        """Entries `[start, stop)` in file order, with labels and active-path membership.

        Bounds are clamped like a slice's (past the end is an empty page, not an error), before
        they reach the native index's machine-sized integers (a 24-digit offset included)."""
        from .reader_values import TreeRow

        start, stop = self._clamp(start, stop)
        labels = dict(self._index.labels())
        path_ids = self._index.path_ids()
        on_path = set(path_ids)
        # With duplicate ids, an id names its last entry (the walk follows ids), so only that
        # entry's line is on the path; an earlier entry with the same id is not.
        path_lines = None
        if self._index.anomalies["duplicate_ids"]:
            path_lines = {self._index.envelope(entry_id)[3] for entry_id in path_ids}
        for entry_id, parent_id, entry_type, timestamp, line in self._index.tree_rows(start, stop):
            active = entry_id in on_path and (path_lines is None or line in path_lines)
            yield TreeRow(entry_id, parent_id, entry_type, timestamp, line, labels.get(entry_id), active)
