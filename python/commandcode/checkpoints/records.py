"""`<session id>.checkpoints.jsonl`: the checkpoint records and their file items (format §6).

Owns: `Checkpoint`, `FileBackup`, their validation, and reading and writing the file. Records are
the real CLI's (`id`/`messageId`, `turnNumber`, `createdAt`, `prompt`, `messageCount`,
`lastMessageId`, `files[{path, hash, skipped?}]`) and the file is rewritten whole, atomically:
lines joined with `\\n`, no trailing newline. Our `files` items add keys the real CLI ignores:

- `algo: "blake3"` — `hash` names an object of our shared store (absent: the real CLI's sha256
  raw blob in `file-history/`), so the two are never confused;
- `mode` — the permission bits to restore;
- `afterHash` — blake3 of what our tool left (`null`: it left no file; absent: unknown).

An item whose fields a restore would act on are malformed is kept byte for byte (`raw`) and
never restored.

Records the real CLI must not offer are written as **hidden lines**: `#` followed by the record's
JSON. `JSON.parse` fails on them, so the real CLI's reader skips them (its menu lists every line
that parses), and this reader strips the `#`. Two kinds are hidden (format §6.1):

- checkpoints a conversation rewind passed (`rewoundAt`): kept so a later rewind or a redo can
  still reach the states they recorded, where the real CLI's own rewinds drop them;
- redo points (`redo: {...}`): the bytes of every file a rewind touched, taken just before it
  restored them, and the leaf it left, so `rewind --redo` puts back exactly what was there.

Turn records also carry `leafEntryId` (the transcript leaf the turn started from) and
`parentCheckpointId` (the checkpoint that was newest on the conversation's path), and a `files`
item for a file that did not exist `missingDirs` (the folders its creation made).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CheckpointError
from ..storage.durable import atomic_write, ensure_dir
from ..storage.jsonfmt import dumps_line
from ..storage.jsonl import parse_line, split_lines
from ..storage.regular import NotRegularFileError, read_if_exists
from . import store as backups
from .settling import before_checkpoints_write

PROMPT_PREVIEW_CHARS = 120
SKIPPED_TOO_LARGE = "too_large"
SKIPPED_DISK_FULL = "disk_full"
SKIPPED_SYMLINK = "symlink"
HIDDEN_PREFIX = "#"
"""Starts a line the real CLI's `JSON.parse` skips: a rewound-past checkpoint or a redo point."""

_HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}")
_MAX_MODE = 2**32 - 1
_ALGORITHMS = frozenset({backups.BLAKE3, backups.SHA256})
_USUAL = frozenset({"path", "hash", "algo", "mode", "afterHash", "blake3"})
"""The keys of the usual item (`FileBackup.from_json`'s fast path; `blake3`: a compatible
backup's twin, `compatible.BLAKE3_KEY`)."""


def _digest_problem(field_name: str, value: Any) -> str | None:
    """Why `value` is not a digest field (`None`: it is one, or null)."""
    if value is None or (isinstance(value, str) and _HEX_DIGEST.fullmatch(value)):
        return None
    return f"`{field_name}` {_shown(value)} is not a 64-digit hex digest"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


def _item_problem(value: dict[str, Any]) -> str | None:
    """Why a `files` item cannot be used as it is: a field a restore would act on is malformed.
    Such an item is never restored (a rewind that needs it is refused, naming the file).

    Every item of a rewind is checked (1,000s), so the usual one (an ASCII path, 64-digit
    digests, no `algo` or a known one, a small `mode`) is told apart first, in a few tests."""
    path, digest, after = value["path"], value.get("hash"), value.get("afterHash")
    algorithm, mode = value.get("algo", backups.SHA256), value.get("mode")
    if path.isascii() and "\x00" not in path and _is_digest(digest) and _is_digest(after) \
            and algorithm.__class__ is str and algorithm in _ALGORITHMS \
            and (mode is None or (mode.__class__ is int and 0 <= mode <= _MAX_MODE)):
        return None
    try:
        path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return "`path` holds a lone surrogate escape that names no file"
    if "\x00" in path:
        return "`path` holds a NUL character"
    if "hash" in value and value["hash"] is not None and not isinstance(value["hash"], str):
        return f"`hash` {_shown(value['hash'])} is not a string"
    problem = _digest_problem("hash", value.get("hash"))
    if problem is None and "afterHash" in value:
        problem = _digest_problem("afterHash", value["afterHash"])
    if problem is not None:
        return problem
    if not isinstance(algorithm, str) or algorithm not in _ALGORITHMS:  # a list or object is unhashable
        return f"`algo` {_shown(algorithm)} is not blake3 or sha256"
    if mode is not None and (not isinstance(mode, int) or isinstance(mode, bool) or not 0 <= mode <= _MAX_MODE):
        return f"`mode` {_shown(mode)} is not a permission number"
    return None


def _is_digest(value: Any) -> bool:
    """Whether `value` is null or a 64-digit hex digest (the fast test of `_digest_problem`).

    `bytes.fromhex` at a third of the regular expression's cost (two digests per item, thousands
    of items a rewind): it skips ASCII whitespace between pairs, but 64 characters give 32 bytes
    only when every one is a hex digit."""
    if value is None:
        return True
    if value.__class__ is not str or len(value) != 64:
        return False
    try:
        return len(bytes.fromhex(value)) == 32
    except ValueError:
        return False


@dataclass
class FileBackup:
    """One `files` item: the state of `path` before the first edit of it in a checkpoint.

    `problem` says why an item read from disk is malformed (a bad digest, mode, algorithm or
    path); such an item is unrestorable and is written back exactly as it was read (`raw`).
    """

    path: str
    hash: str | None
    skipped: str | None = None
    algorithm: str = backups.SHA256
    mode: int | None = None
    after_known: bool = False
    after_hash: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None
    raw: dict[str, Any] | None = None

    _KNOWN = frozenset({"path", "hash", "skipped", "algo", "mode", "afterHash"})

    @classmethod
    def from_json(cls, value: Any) -> FileBackup | None:
        """Parses an item; `None` when it has no string `path`.

        The usual item (ours or a compatible one: no keys but `_USUAL`, an ASCII path, 64-digit
        digests, a known `algo`, a small `mode`) is told apart first and made in one step, at
        two thirds of the general path's cost: a rewind parses thousands."""
        if value.__class__ is dict and value.keys() <= _USUAL:
            get = value.get
            path, digest, after, mode = get("path"), get("hash"), get("afterHash"), get("mode")
            algorithm = get("algo", backups.SHA256)
            if path.__class__ is str and path.isascii() and "\x00" not in path \
                    and algorithm.__class__ is str and algorithm in _ALGORITHMS \
                    and (mode is None or (mode.__class__ is int and 0 <= mode <= _MAX_MODE)) \
                    and _is_digest(digest) and _is_digest(after):
                return cls(path, digest, None, algorithm, mode, "afterHash" in value, after,
                           {"blake3": value["blake3"]} if "blake3" in value else {})
        if not isinstance(value, dict) or not isinstance(value.get("path"), str):
            return None
        problem = _item_problem(value)
        skipped = value.get("skipped")
        if skipped is not None and not isinstance(skipped, str):
            skipped = None
        if problem is not None:
            return cls(value["path"], None, skipped, problem=problem, raw=value)
        extra = {key: item for key, item in value.items() if key not in cls._KNOWN} \
            if len(value) > 6 or not cls._KNOWN.issuperset(value) else {}
        return cls(value["path"], value.get("hash"), skipped, value.get("algo", backups.SHA256), value.get("mode"),
                   "afterHash" in value, value.get("afterHash"), extra)

    def to_json(self) -> dict[str, Any]:
        if self.raw is not None:
            return dict(self.raw)
        out: dict[str, Any] = {"path": self.path, "hash": self.hash}
        if self.skipped is not None:
            out["skipped"] = self.skipped
        if self.algorithm != backups.SHA256:
            out["algo"] = self.algorithm
        if self.mode is not None:
            out["mode"] = self.mode
        if self.after_known:
            out["afterHash"] = self.after_hash
        out.update(self.extra)
        return out

    @property
    def store_object(self) -> str | None:
        """The id of the object in our store that holds this state: `hash` of a blake3 item, the
        `blake3` key of a compatible one (`checkpoints/compatible.py`), else None."""
        if self.algorithm == backups.BLAKE3:
            return self.hash
        twin = self.extra.get("blake3")  # compatible.BLAKE3_KEY
        return twin if isinstance(twin, str) else None

    @property
    def restorable(self) -> bool:
        """Whether a rewind can put this state back (it was backed up, did not exist, or was a
        symlink, FIFO or empty folder a shell command removed: `shell_items.py`)."""
        if self.problem is not None:
            return False
        return self.skipped is None or "kind" in self.extra or "afterKind" in self.extra


class _PathIndex:
    """A checkpoint's items by resolved path (the first item of a path wins), caught up with the
    items appended since it last looked."""

    def __init__(self, cwd: Path, files: list[FileBackup]) -> None:
        self.cwd, self.files, self.count = cwd, files, 0
        self.base = os.fspath(cwd)
        self.by_path: dict[str, FileBackup] = {}

    def catch_up(self) -> None:
        base, by_path = self.base, self.by_path
        for item in self.files[self.count:]:
            by_path.setdefault(_resolved(item.path, base), item)
        self.count = len(self.files)


UNKNOWN_COUNT = -1
"""`Checkpoint.message_count` of a record whose `messageCount` is not a count (a conversation
rewind to it needs its `lastMessageId`)."""


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass
class Checkpoint:
    """One record: the state before one user prompt's turn."""

    id: str
    message_id: str
    turn_number: int
    created_at: str
    prompt: str | None
    message_count: int
    last_message_id: str | None
    files: list[FileBackup] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    _index: _PathIndex | None = field(default=None, init=False, repr=False, compare=False)

    _KNOWN = frozenset(
        {"id", "messageId", "turnNumber", "createdAt", "prompt", "messageCount", "lastMessageId", "files", "messages"}
    )

    @classmethod
    def from_json(cls, value: Any, position: int) -> Checkpoint | None:
        """Parses a record (legacy `messages` arrays are converted); `None` when unusable."""
        if not isinstance(value, dict) or not isinstance(value.get("id"), str):
            return None
        raw_count = message_count = value.get("messageCount")
        if not _is_count(message_count):
            message_count = None
        last_message_id = value.get("lastMessageId")
        legacy_messages = value.get("messages")
        if message_count is None and isinstance(legacy_messages, list):
            message_count = len(legacy_messages)
            if legacy_messages and last_message_id is None:
                meta = legacy_messages[-1].get("meta") if isinstance(legacy_messages[-1], dict) else None
                last_message_id = meta.get("messageId") if isinstance(meta, dict) else None
        turn_number = value.get("turnNumber")
        files = value.get("files")
        prompt = value.get("prompt")
        created_at = value.get("createdAt")
        message_id = value.get("messageId")
        return cls(
            id=value["id"],
            message_id=message_id if isinstance(message_id, str) else value["id"],
            turn_number=turn_number if isinstance(turn_number, int) and not isinstance(turn_number, bool) else position + 1,
            created_at=created_at if isinstance(created_at, str) else "",
            prompt=prompt if isinstance(prompt, str) else None,
            # An unusable count (negative, a bool, a float, text) is UNKNOWN_COUNT, never 0 (that
            # would silently mean "the first turn"); the stored value is kept as it was.
            message_count=message_count if message_count is not None
            else (0 if raw_count is None and "messageCount" not in value else UNKNOWN_COUNT),
            last_message_id=last_message_id if isinstance(last_message_id, str) else None,
            files=[item for item in map(FileBackup.from_json, files if isinstance(files, list) else []) if item],
            extra={key: item for key, item in value.items() if key not in cls._KNOWN}
            | ({"messageCount": raw_count} if message_count is None and "messageCount" in value else {}),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "messageId": self.message_id,
            "turnNumber": self.turn_number,
            "createdAt": self.created_at,
        }
        if self.prompt is not None:
            out["prompt"] = self.prompt
        out["messageCount"] = self.message_count
        if self.last_message_id is not None:
            out["lastMessageId"] = self.last_message_id
        out["files"] = [item.to_json() for item in self.files]
        out.update(self.extra)
        return out

    @property
    def redo(self) -> dict[str, Any] | None:
        """A redo point's facts (`op`, `checkpoint`, `mode`, `leafBefore`, `leafAfter`,
        `rewoundBefore`, `conversation`, `undoes`, `undoneBy`); `None` for a turn's checkpoint."""
        value = self.extra.get("redo")
        return value if isinstance(value, dict) else None

    @property
    def is_redo_point(self) -> bool:
        return self.redo is not None

    @property
    def rewound(self) -> bool:
        """Whether a conversation rewind passed this checkpoint (it is hidden from the real CLI)."""
        return isinstance(self.extra.get("rewoundAt"), str)

    def set_rewound(self, moment: str | None) -> None:
        if moment is None:
            self.extra.pop("rewoundAt", None)
        else:
            self.extra["rewoundAt"] = moment

    @property
    def hidden(self) -> bool:
        return self.rewound or self.is_redo_point

    @property
    def leaf_entry_id(self) -> str | None:
        value = self.extra.get("leafEntryId")
        return value if isinstance(value, str) else None

    @property
    def parent_checkpoint_id(self) -> str | None:
        value = self.extra.get("parentCheckpointId")
        return value if isinstance(value, str) else None

    @property
    def starts_at_root(self) -> bool:
        """`parentCheckpointId: null`: no checkpoint was on the conversation's path when the turn
        started (every earlier one was rewound past)."""
        return "parentCheckpointId" in self.extra and self.extra["parentCheckpointId"] is None

    def backup_for(self, key: str, cwd: Path) -> FileBackup | None:
        """The item of this checkpoint for a resolved path, if any (the first one counts).

        Looked up in an index built as items are appended, so recording n items of one turn (a
        `bash` call that creates 20,000 files) costs O(n), not O(n²). The index follows `files`
        by length: items are only ever appended; a list replaced or shortened is indexed anew."""
        return self._indexed(cwd).by_path.get(key)

    def items_by_path(self, cwd: Path) -> dict[str, FileBackup]:
        """This checkpoint's items by resolved path (the first item of a path wins), in file
        order: the index `backup_for` looks in, so a rewind's planning and its leftovers pass
        resolve each path once between them. Read it; never change it."""
        return self._indexed(cwd).by_path

    def _indexed(self, cwd: Path) -> _PathIndex:
        index = self._index
        if index is None or index.cwd != cwd or index.files is not self.files or index.count > len(self.files):
            index = self._index = _PathIndex(cwd, self.files)
        index.catch_up()
        return index

    def add_files(self, added: list[tuple[str, FileBackup]], cwd: Path) -> None:
        """Appends items with their resolved paths (`(key, item)`), indexed by those keys: one
        `bash` call's thousands of items in one batch, no path resolved twice."""
        index = self._indexed(cwd)
        for key, item in added:
            index.by_path.setdefault(key, item)
        self.files.extend(item for _, item in added)
        index.count = len(self.files)

    @property
    def backup_count(self) -> int:
        return sum(1 for item in self.files if item.hash is not None)


def prompt_preview(prompt: str) -> str | None:
    """The first non-blank line, trimmed, cut to 120 characters; `None` when there is none."""
    for line in prompt.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped[:PROMPT_PREVIEW_CHARS]
    return None


def resolve_path(path: str, cwd: Path) -> str:
    """A tool's `file_path` as an absolute, lexically normalised path (relative to `cwd`)."""
    return _resolved(path, os.fspath(cwd))


def _resolved(path: str, base: str) -> str:
    """`os.path.normpath(os.path.join(base, path))`, without the normalisation where the joined
    path is normal already (one leading slash, no empty, `.` or `..` part, no trailing slash): the
    usual absolute path a tool recorded, 1,000s of them a rewind, at a fraction of the cost."""
    joined = path if path[:1] == "/" else os.path.join(base, path)
    if "//" in joined or "/." in joined or joined[-1:] == "/" or joined[:1] != "/":
        return os.path.normpath(joined)
    return joined


def read_checkpoints(path: Path) -> list[Checkpoint]:
    """The records of a checkpoints file; unparseable lines (invalid JSON, or nested deeper than
    the parser can follow) are skipped, a missing file is `[]`.

    Raises:
        CheckpointError: `path` is a FIFO, folder or device (opening it never blocks), or cannot
            be read.
    """
    return parse_checkpoints(read_checkpoints_data(path))


def read_checkpoints_data(path: Path) -> bytes | None:
    """The bytes of a checkpoints file (`None`: there is none), for `parse_checkpoints`.

    Raises:
        CheckpointError: as `read_checkpoints`.
    """
    try:
        return read_if_exists(path, follow=True)  # a symlink is read through (our writes replace the link)
    except NotRegularFileError:
        raise CheckpointError(f"{path} is not a regular file; its checkpoints cannot be read") from None
    except OSError as error:
        raise CheckpointError(f"cannot read {path}: {error.strerror or error}") from None


def parse_checkpoints(data: bytes | None) -> list[Checkpoint]:
    """The records of a checkpoints file's bytes (`read_checkpoints`)."""
    if data is None:
        return []
    records: list[Checkpoint] = []
    for line in split_lines(data):
        ok, value = parse_line(line[len(HIDDEN_PREFIX):] if line.startswith(HIDDEN_PREFIX) else line)
        record = Checkpoint.from_json(value, len(records)) if ok else None
        if record is not None:
            records.append(record)
    return records


def checkpoints_bytes(records: list[Checkpoint]) -> bytes:
    """The file's content for `records`: lines joined with `\\n`, no trailing newline; hidden
    records start with `#`."""
    return "\n".join((HIDDEN_PREFIX if record.hidden else "") + dumps_line(record.to_json())
                     for record in records).encode("utf-8")


def write_checkpoints(path: Path, records: list[Checkpoint]) -> None:
    """Rewrites the file whole and atomically (`write_checkpoints_data`)."""
    write_checkpoints_data(path, checkpoints_bytes(records))


def write_checkpoints_data(path: Path, data: bytes) -> None:
    """Replaces a checkpoints file with `data`, whole and atomically: every write of one goes
    through here. It first waits for this process's restore of the session still settling, whose
    journal would otherwise be left open to undo this write (`settling.py`).

    Raises:
        CheckpointError: that restore's settle failed and its journal is still open.
        OSError: the file could not be written.
    """
    before_checkpoints_write(path)
    ensure_dir(path.parent)
    atomic_write(path, data)
