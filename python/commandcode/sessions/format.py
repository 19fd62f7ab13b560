"""The v3 transcript format in one place (format §4.2, §4.3, §4.5): entry types, the envelope,
the header, and the one rule for a header's timestamp.

Owns: `ENTRY_TYPES`, `ENVELOPE_KEYS`, `LEAF_MARKER_TYPE`, `build_header` (the writer's new
sessions and a legacy migration both build their header here), and `header_timestamp` (what a
meta `createdAt` means when a header is synthesized or migrated). Cheap to import: a warm open
uses it.
"""

from __future__ import annotations

import os

from ..storage.ids import epoch_ms_value, iso_from_ms, parse_iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

FORMAT_VERSION = 3
ENTRY_TYPES = frozenset(
    {"message", "model_change", "effort_change", "compaction", "branch_summary", "custom", "custom_message",
     "label", "session_info"}
)
ENVELOPE_KEYS = frozenset({"type", "id", "parentId", "timestamp"})
LEAF_MARKER_TYPE = "commandcode.leaf"
MIN_ID_PREFIX = 4
"""An id prefix names a session or an entry only from this many characters on (git's shortest
abbreviation): a shorter reference such as a session named `B` is a name, never the prefix of an id
that happens to start with `b`."""
"""`customType` of the `custom` entry that moves the leaf (a rewind of the conversation)."""


def clean_name(name: str) -> str:
    """A session name as the real CLI stores it: CR/LF become spaces, trimmed."""
    return name.replace("\r", " ").replace("\n", " ").strip()


def read_header_cwd(transcript: Path | str) -> str | None:
    """The `cwd` of the transcript's header as written (the first non-blank line, when it is a
    `session` header with a string `cwd`); `None` when there is none or the file cannot be read.
    Reads only that line, and never migrates or scans the file."""
    from ..storage.jsonl import first_value_in_file  # json: not for a warm open

    try:
        ok, header = first_value_in_file(transcript)
    except OSError:
        return None
    if ok and isinstance(header, dict) and header.get("type") == "session" and isinstance(header.get("cwd"), str):
        return str(header["cwd"])
    return None


def build_header(session_id: str, timestamp: str, cwd: str, *, parent_session: str | None = None,
                 extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The first line of a v3 transcript: `type, version, id, timestamp, cwd`, then
    `parentSession` (the absolute path of the source transcript) when given, then `extra`."""
    header: dict[str, Any] = {"type": "session", "version": FORMAT_VERSION, "id": session_id,
                              "timestamp": timestamp, "cwd": cwd}
    if parent_session:
        header["parentSession"] = parent_session
    if extra:
        header.update(extra)
    return header


def created_timestamp(created: object) -> str | None:
    """The ISO timestamp a meta `createdAt` stands for, or `None` when it stands for none.

    A finite number is epoch milliseconds (when a date can hold it); a string is used as it is
    when it parses as ISO-8601. Anything else — `true`/`false` (which JSON keeps apart from
    numbers), `null`, arrays, objects, an out-of-range number — is no time at all, so the file's
    own time is used instead, as the real CLI falls back to the file's birthtime.
    """
    milliseconds = epoch_ms_value(created)  # range-checked: 1e308 or 10**30 must not reach datetime
    if milliseconds is not None:
        return iso_from_ms(milliseconds)
    if isinstance(created, str) and parse_iso(created) is not None:
        return created
    return None


def file_time_iso(path: Path | str) -> str:
    """The file's birthtime when the OS reports one, else its mtime, as an ISO timestamp."""
    status = os.stat(path)
    birth = getattr(status, "st_birthtime", None)
    return iso_from_ms(int((birth if birth is not None else status.st_mtime) * 1000))


def header_timestamp(created: object, transcript: Path | str) -> str:
    """A synthesized or migrated header's timestamp: meta `createdAt`, else the file's time."""
    return created_timestamp(created) or file_time_iso(transcript)
