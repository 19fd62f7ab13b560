"""Type stub for `commandcode._native`, the Rust core (crate `commandcode-native`).

Errors: `commandcode.errors.UnsupportedFormatError` (newer transcript version),
`SessionChangedError` (a transcript changed between scan and read), `BackupIntegrityError`,
`RestoreError` and `ChangedOutsideError` (store and restore), `OSError` with `filename` set.
"""

from collections.abc import Callable, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Literal, Self, final

__all__ = [
    "MAX_BACKUP_SIZE",
    "MAX_RESULT_CHARS",
    "MAX_TOOL_CHARS",
    "SUPPORTED_VERSION",
    "FileState",
    "ObjectStore",
    "PreparedRestore",
    "Redactor",
    "RestoreItem",
    "RestorePlan",
    "SessionIndex",
    "StatTable",
    "__version__",
    "check_restore",
    "content_id",
    "extract_texts",
    "fingerprints_of",
    "fold_text",
    "folder_changes",
    "fork_source_of",
    "free_space",
    "json_dumps",
    "json_encode_entry",
    "json_encode_line",
    "listing_rows_of",
    "names_like",
    "names_of_files",
    "prepare_restore",
    "recover_restore",
    "sanitize_path",
    "sanitize_paths",
    "scan_session",
    "scan_tree_items",
    "search_texts",
    "settle_restores",
    "texts_at",
]

__version__: str
SUPPORTED_VERSION: int
MAX_BACKUP_SIZE: int

_Path = str | PathLike[str]

@final
class SessionIndex:
    """A scanned transcript: header, entry envelopes, skipped lines and the session tree."""

    def __contains__(self, id: object, /) -> bool:
        """Whether an entry id is in the file (from the id hashes; never raises)."""

    @property
    def path(self) -> Path: ...
    @property
    def source(self) -> Literal["scanned", "rebuilt", "loaded", "appended", "appended_rewritten", "tail"]:
        """How the index was obtained: without a sidecar, rebuilt, loaded as is, appended to, or
        from the transcript's end only."""
    @property
    def header(self) -> dict[str, Any] | None: ...
    @property
    def format(self) -> Literal["v3", "v2", "v1"] | None: ...
    @property
    def legacy_entrypoint(self) -> str | None: ...
    @property
    def file_size(self) -> int: ...
    @property
    def ends_with_newline(self) -> bool: ...
    @property
    def has_bom(self) -> bool: ...
    @property
    def line_count(self) -> int: ...
    @property
    def entry_count(self) -> int: ...
    @property
    def skipped(self) -> list[dict[str, Any]]:
        """Skipped lines: `{line, offset, length, reason, detail}` (line is 1-based)."""
    @property
    def anomalies(self) -> dict[str, Any]:
        """`{cycle_detected, unknown_parents, duplicate_ids}`."""
    @property
    def leaf_id(self) -> str | None: ...
    @property
    def path_length(self) -> int:
        """Number of entries on the active path."""
    @property
    def name(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def effort(self) -> str | None: ...
    @property
    def message_count(self) -> int: ...
    @property
    def last_timestamp(self) -> str | None: ...
    def path_ids(self) -> list[str]: ...
    def context_plan(self) -> tuple[list[str], str | None, int]:
        """`(entry_ids, compaction_id, strip_thinking_until)` of the context rebuild."""
    def read_context(self) -> list[dict[str, Any]]:
        """The context entries, parsed, in context order.

        Raises:
            SessionChangedError: the transcript changed since the scan.
        """
    def read_context_raw(self) -> list[bytes]:
        """The context entries' raw lines (without the `\\n`), in context order.

        Raises:
            SessionChangedError: the transcript changed since the scan.
        """
    def read_entries(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The entries with these ids, parsed, in the order given.

        Raises:
            KeyError: an id names no entry.
            SessionChangedError: the transcript changed since the scan.
        """
    def envelope(self, id: str) -> tuple[str, str | None, str, int]:
        """`(type, parent_id, timestamp, line)` of one entry. Raises `KeyError`."""
    def tree_rows(self, start: int = 0, stop: int | None = None) -> list[tuple[str, str | None, str, str, int]]:
        """`(id, parent_id, type, timestamp, line)` for entries `[start, stop)` in file order."""
    def tree_details(self, start: int = 0, stop: int | None = None) -> list[tuple[str | None, bool, int]]:
        """`(role, is_meta, line length)` for entries `[start, stop)`; role is `None` for non-messages."""
    def tree_layout(self, hidden: Sequence[str], filter: str = "default") -> tuple[bytes, bytes, bytes, bytes]:
        """The navigator's rows: `(order, depth, flags, size)`, packed little-endian u32 (flags: a
        byte per row; 1 on the active path, 2 has children); entries of the `hidden` types left out."""
    def position(self, id: str) -> int | None:
        """The file-order position of the entry an id names, or None."""
    def labels(self) -> list[tuple[str, str]]: ...
    def message_ids(self) -> list[tuple[str, str]]:
        """`(meta.messageId, entry id)` for every message entry that has one."""
    def read_first_users(self, limit: int = 8) -> list[dict[str, Any]]: ...

def scan_session(path: _Path, index_path: _Path | None = None, tail: bool = True) -> SessionIndex:
    """Scans a transcript, through the index sidecar at `index_path` when given.

    With `tail`, where the whole transcript would be scanned it is first read from its end; when
    that gives the context exactly (format §9), the index answers the context from it and scans
    the whole file only when something else is asked for.

    Raises:
        UnsupportedFormatError: the header declares a newer format version.
        OSError: the transcript cannot be read.
    """

@final
class FileState:
    """What is (or was backed up) at a path."""

    kind: Literal["regular", "missing", "symlink", "not_regular", "too_large"]
    content_id: str | None
    size: int | None
    mode: int | None
    stored_now: bool

@final
class StatTable:
    """Cached stat keys (size, mtime_ns, inode, mode) of a project's files; scans report only changes."""

    def __new__(cls, root: str, excluded: list[str], max_size: int = ...) -> Self: ...
    def scan(
        self, names: list[str] | None, max_files: int, full: bool = True
    ) -> list[tuple[str, tuple[int, int, int, int] | None]] | None: ...
    def set(self, path: str, key: tuple[int, int, int, int]) -> None: ...
    def set_many(self, entries: list[tuple[str, tuple[int, int, int, int]]]) -> None: ...
    def made_folders(self, paths: list[str]) -> list[list[str]]: ...
    def pin_folders(self, extra: list[str]) -> list[str]: ...
    def unpin_folders(self) -> None: ...
    def structure_changed(self) -> bool: ...
    def set_extra_folders(self, folders: list[str]) -> None: ...
    def forget(self, path: str) -> None: ...
    def __len__(self) -> int: ...

@final
class ObjectStore:
    """The shared blake3 + zstd content-addressed backup store."""

    def __new__(cls, root: _Path) -> Self: ...
    @property
    def root(self) -> Path: ...
    def backup_file(self, path: _Path, max_size: int = ...) -> FileState:
        """Backs up `path` without following symlinks; nothing over `max_size` is read."""
    def inspect_file(self, path: _Path, max_size: int = ...) -> FileState: ...
    def inspect_files(self, paths: Sequence[_Path], max_size: int = ...) -> list[tuple[str, int] | None]: ...
    def put_bytes(self, data: bytes) -> tuple[str, bool]: ...
    def read(self, content_id: str) -> bytes:
        """The verified original bytes. Raises `BackupIntegrityError`."""
    def verify(self, content_id: str) -> None:
        """Raises `BackupIntegrityError` unless the object exists, decompresses and hashes to its name."""
    def contains(self, content_id: str) -> bool: ...
    def object_path(self, content_id: str) -> Path: ...
    def sweep(self, referenced: Sequence[str], grace_seconds: float) -> list[tuple[str, int]]: ...
    def absorb_packs(self, pause_ms: int = 0) -> list[tuple[str, int]]:
        """Makes the objects of every pack loose objects, then deletes the packs; returns
        `{packs, objects, removed_temporaries}` as pairs."""
    def packed_ids(self) -> list[str]:
        """The ids of the objects the packs hold, ascending."""
    def packed_sizes(self) -> list[tuple[str, int]]:
        """`(id, bytes)` of every object the packs hold (its frame's length), ascending by id."""
    def usage(self) -> tuple[int, int]:
        """`(objects, bytes_on_disk)`: loose objects, and packed ones no collection absorbed yet."""

@final
class RestoreItem:
    """One target of a restore: the content it should get (or absence), and what we expect there now."""

    def __new__(
        cls,
        target: _Path,
        *,
        digest: str | None = None,
        algorithm: Literal["blake3", "sha256"] = "blake3",
        blob_folder: _Path | None = None,
        blake3: str | None = None,
        mode: int | None = None,
        expected: str | None = None,
        kind: Literal["file", "symlink", "fifo", "socket", "folder"] = "file",
        link: _Path | None = None,
        expected_link: _Path | None = None,
    ) -> Self: ...
    @property
    def target(self) -> Path: ...

@final
class RestorePlan:
    """`entries`: `(target, action, changed_outside, content_id)`; `problems`: `(target, code, message)`."""

    entries: list[tuple[str, Literal["write", "delete", "unchanged"], bool, str | None]]
    problems: list[tuple[str, str, str]]

def check_restore(
    object_store: ObjectStore, items: Sequence[RestoreItem], *, confine_to: _Path | None = None,
    protected: Sequence[_Path] = ...,
) -> RestorePlan:
    """Verifies a restore (objects, digests, targets) without writing anything."""

@final
class PreparedRestore:
    """A restore verified once and holding its journal lock until `commit` or `close`."""

    plan: RestorePlan
    def keep(
        self, object_store: ObjectStore, max_size: int, *, level: int | None, pause_ms: int = 0
    ) -> list[tuple[str, Literal["regular", "missing", "other"], str | None, int | None, int | None, bool]]:
        """Stores the current bytes of every target the restore changes (new objects at zstd
        `level`, or uncompressed stored frames when it is `None`; made durable by one flush): `(target, kind, content_id, mode, size, stored_now)`
        per changed target (`"other"`: not kept). `pause_ms`: a crash-test hook."""
    def commit(
        self, object_store: ObjectStore, *, companion: tuple[_Path, bytes] | None = None, force: bool = False,
        fail_before_step: int | None = None, step_delay_ms: int = 0, settle_pause_ms: int = 0,
    ) -> RestorePlan:
        """Restores every item all or nothing; returns once every target holds its new content.
        The settle (the flush, the journal's removal) runs on a native thread holding the lock
        until it is done (`settle_restores`). `settle_pause_ms`: a crash-test hook.

        Raises:
            RestoreError: verification failed (nothing written) or a write failed (everything put back).
            ChangedOutsideError: targets changed outside the tracked tools and `force` is off.
        """
    def close(self) -> None:
        """Releases the journal lock without restoring anything."""

def settle_restores(journal: _Path | None = None) -> list[tuple[str, str]]:
    """Waits for every restore of this process still settling (only `journal`'s, when given);
    `(journal, reason)` of each settle waited for that failed since the last call (its journal is
    left for the next recovery)."""

def prepare_restore(
    object_store: ObjectStore, items: Sequence[RestoreItem], journal: _Path, *, confine_to: _Path | None = None,
    protected: Sequence[_Path] = ..., in_place: bool = True, memory_budget: int = ...,
) -> PreparedRestore:
    """Takes the journal lock, recovers a pending journal and verifies `items`; writes nothing."""


def recover_restore(
    journal: _Path,
    *,
    root: _Path | None,
    protected: list[_Path] = ...,
    store: _Path | None = None,
    blob_folder: _Path | None = None,
    companion: _Path | None = None,
) -> tuple[str, list[Path]] | None:
    """Completes or rolls back an interrupted restore; `(outcome, paths)` or None when there was none.
    A journal naming a path outside the bounds given is kept and refused (`RestoreError`)."""

def free_space(path: _Path) -> int | None: ...
def names_like(folders: Sequence[_Path], prefix: str, suffix: str) -> list[tuple[int, str]]:
    """`(index in folders, name)` of every entry of each folder whose name starts with `prefix`
    and ends with `suffix` (no stat of any entry); a folder that cannot be read gives nothing."""
def folder_changes(folder: _Path, previous: bytes) -> tuple[list[str], list[str], bytes]:
    """(names new or changed, names gone, the snapshot now) of the `*.jsonl`/`*.meta.json` files in `folder`."""
def listing_rows_of(items: Sequence[tuple[_Path, _Path | None]]) -> list[dict[str, Any] | BaseException]:
    """The listing fields of each `(transcript, index sidecar or None)`, scanned in parallel: a dict
    (`format`, `header` as (id, timestamp, cwd) or None, `name`, `model`, `message_count`,
    `entry_count`, `skipped_lines`, `last_timestamp`, `size`, `first_message`, `last_prompt`
    (False: not decided, read it in Python), `fingerprint`, `source`), or the exception opening it raised."""
def names_of_files(items: Sequence[tuple[_Path, _Path | None]]) -> list[tuple[str | None, str | Literal[False] | None] | BaseException]:
    """(header cwd or None, latest `session_info` name) of each `(transcript, index sidecar or
    None)`, from a sidecar that describes it as it is, else read from its ends; the name is False
    when a whole summary must decide."""
def fork_source_of(transcript: _Path, end: int, candidates: Sequence[str]) -> tuple[str, int, int, bool, str | None, str | None, str | None, str | None] | None:
    """What a fork needs of the transcript's first `end` bytes, read from its ends and one pass
    over the body: (header cwd, body start, end of the bytes kept, whether they need a closing
    newline, leaf id, latest `session_info` name, the model the leaf's path last used near the
    end, the first of `candidates` the body does not hold as a JSON string), or None when only a
    scan can be sure."""
def fingerprints_of(paths: Sequence[_Path]) -> list[str]:
    """The content fingerprint (blake3 of the first and last 4 KiB and the size) of each file, "" unreadable."""
def content_id(data: bytes) -> str:
    """The blake3 hex of `data`."""
def scan_tree_items(root: _Path, excluded: Sequence[_Path] = ...) -> list[tuple[Path, Literal["symlink", "fifo", "socket", "device", "folder"], Path | None, int]]:
    """`(path, kind, link, mode)` of every symlink, FIFO and hollow folder under `root`, sorted."""

# JSON encoding (text-identical to Python's `json` with `ensure_ascii=False`, lone surrogates
# written as `\udXXX` escapes). Errors as json's: `TypeError` (unsupported value or key type,
# unless `default` handles the value), `ValueError` (NaN/inf while `allow_nan` is off, circular
# reference), `RecursionError` (nesting past `sys.getrecursionlimit()`, at most 3,000 levels).

def json_dumps(
    value: Any,
    *,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    allow_nan: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=..., separators=..., allow_nan=..., default=...)`;
    `separators` default to the compact `(",", ":")`."""

def json_encode_line(value: Any) -> bytes:
    """The compact line of `value` and `\\n`, as UTF-8 (a JSONL record)."""

def json_encode_entry(entry_type: str, id: str, parent_id: str | None, timestamp: str, fields: dict[str, Any]) -> bytes:
    """The record of `{"type": entry_type, "id": id, "parentId": parent_id, "timestamp": timestamp,
    **fields}`, as `json_encode_line` writes it, without building that dict."""

@final
class Redactor:
    """A compiled secret-redaction rule table (`export/redact.py` owns the rules).

    Raises:
        ValueError: a pattern does not compile, or patterns and markers differ in number.
    """

    def __new__(cls, patterns: Sequence[str], markers: Sequence[str]) -> Self: ...
    def redact(self, text: str) -> tuple[str, list[tuple[int, int]]]:
        """`(text, [(rule index, replacements), ...])`; every match's `s` group replaced by its
        rule's marker, rules applied in order; `text` itself when nothing matched."""

def sanitize_paths(text: str, project: str | None = None, home: str | None = None) -> str:
    """`text` with every absolute path sanitized: `./rel` inside `project`, `~/rel` inside `home`,
    `<user-home>/rel` in another user's home, else `<system-path>/<basename>`; `text` itself
    when it has none."""

def sanitize_path(path: str, project: str | None = None, home: str | None = None) -> str:
    """One absolute path, sanitized as `sanitize_paths` does."""

MAX_TOOL_CHARS: int
MAX_RESULT_CHARS: int
_TextRow = tuple[int, int, int, str, str, str]

def extract_texts(path: str | PathLike[str], start: int, max_bytes: int, kinds: int = 15) -> tuple[list[_TextRow], int]:
    """`(rows, end)`: the text rows `(offset, ordinal, kind, entry, timestamp, text)` of the kinds
    whose bit is set in `kinds`, of the whole lines from `start` on, reading about `max_bytes` (to
    the next line end), and the offset after the last whole line read. `kind`: 0 user,
    1 assistant, 2 tool, 3 result; `ordinal`: the text's block's place in its message's content."""

def search_texts(path: str | PathLike[str], start: int, stop: int, needle: str, kinds: int,
                 keep: int) -> tuple[list[_TextRow], int]:
    """`(rows, end)`: the rows between `start` and `stop` whose kind's bit is set in `kinds` and
    whose lowercased text holds `needle` (already lowercased), the last `keep` of them."""

def texts_at(path: str | PathLike[str], offsets: list[int]) -> list[list[_TextRow]]:
    """The rows of the lines starting at `offsets` (an empty list for a line that is gone)."""

def fold_text(text: str) -> str:
    """`text` lowercased as the matching folds it (Unicode)."""
