"""What a session file says about itself, read from its edges: its name and its last activity.

One rule each, asked by the reader (`Session.name`), the listing rows (`catalog/summary.py`),
the name checks (`catalog/names.py`) and the sweep (`workspace/retire/plan.py`):

- `display_name`: a session's name is its latest `session_info` name (in file order, trimmed),
  else the meta sidecar's `title` (trimmed); `reference_names` adds `meta.name`, the names a
  user's reference may use.
- `latest_info_name`: that latest `session_info` name found by a byte search from the end of the
  file, one JSON parse per candidate line (a 10 MB transcript takes 0.4 s to open whole, this
  microseconds); `user_given_name` is the name a sweep spares (a renamed meta title, or a
  `session_info` name).
- `last_activity`: the newest entry `timestamp` among the file's last 256 KiB of lines, else the
  header's; never the file's mtime, which a copy or a backup tool resets.

The last prompt and the searchable texts of an entry are `texts.py`'s.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .files import SessionFiles

TAIL_BYTES = 256 * 1024
UNSEARCHABLE = "\0unsearchable"  # `latest_info_name`: the file cannot be mapped


def _trimmed(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def display_name(info_name: str | None, meta: dict[str, Any]) -> str | None:
    """The name a session shows: its latest `session_info` name, else `meta.title` (trimmed)."""
    return info_name or _trimmed(meta.get("title"))


def reference_names(name: str | None, meta: dict[str, Any]) -> tuple[str, ...]:
    """The names a reference may use for a session shown as `name`: that, `meta.title` and
    `meta.name` (trimmed, each once, in this order)."""
    found = (name, _trimmed(meta.get("title")), _trimmed(meta.get("name"))) if meta else (name,)
    return tuple(dict.fromkeys(value for value in found if value))


def user_given_name(files: SessionFiles) -> str | None:
    """The name the user gave the session (a `session_info` name or a renamed meta title), as the
    reader would show it; None for a session never named."""
    from .meta import read_meta

    meta = read_meta(files.meta) if files.meta.exists() else {}
    if isinstance(meta, dict) and meta.get("userRenamed") and isinstance(meta.get("title"), str):
        return str(meta["title"])
    found = latest_info_name(files.transcript)
    if found is None:
        return None  # never named
    if found is UNSEARCHABLE:
        from .reader import open_session

        try:
            return open_session(files.transcript, tail=False).name
        except Exception:  # an unreadable transcript has no name we can see
            return None
    return display_name(found, meta if isinstance(meta, dict) else {})


def latest_info_name(path: Path) -> str | None:
    """The name of the file's last `session_info` entry ("" when it is empty), None when there is
    none, `UNSEARCHABLE` when the file cannot be mapped. The reader's answer (the latest in file
    order), found by a byte search backwards instead of reading the whole session."""
    import mmap

    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                return None
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                end = len(mapped)
                while True:
                    hit = mapped.rfind(b'"session_info"', 0, end)
                    if hit == -1:
                        return None
                    start = mapped.rfind(b"\n", 0, hit) + 1
                    stop = mapped.find(b"\n", hit)
                    name = _info_name(mapped[start:stop if stop != -1 else len(mapped)])
                    if name is not None:
                        return name
                    end = start
    except (OSError, ValueError):
        return UNSEARCHABLE


def _info_name(line: bytes) -> str | None:
    """The trimmed name of a `session_info` entry line ("" for none), None for any other line."""
    import json  # not for a warm listing, which only asks `display_name`

    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(value, dict) or value.get("type") != "session_info" or not isinstance(value.get("id"), str):
        return None
    name = value.get("name")
    return name.strip() if isinstance(name, str) else ""


def last_activity(transcript: Path) -> float | None:
    """The epoch seconds of the newest entry (from the file's tail), else of the header; None
    when neither has a time (or the file cannot be read)."""
    try:
        with open(transcript, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            start = max(0, size - TAIL_BYTES)
            handle.seek(start)
            tail = handle.read()
    except OSError:
        return None
    newest = None
    for line in tail.split(b"\n")[1 if start else 0:]:
        moment = _line_time(line)
        if moment is not None and (newest is None or moment > newest):
            newest = moment
    if newest is None and start:  # a tail of one huge line: the header still says when it began
        with open(transcript, "rb") as handle:
            newest = _line_time(handle.readline(TAIL_BYTES))
    return newest


def _line_time(line: bytes) -> float | None:
    if b'"timestamp"' not in line:
        return None
    import json

    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    stamp = value.get("timestamp") if isinstance(value, dict) else None
    from ..storage.ids import parse_iso

    parsed = parse_iso(stamp) if isinstance(stamp, str) else None
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        from datetime import UTC

        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()
