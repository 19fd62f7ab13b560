"""Identifiers and timestamps in the real CLI's shapes (format §2).

Session, message and checkpoint ids are lowercase uuid4 strings; entry ids are the first 8 hex
characters of a fresh uuid4, unique within a file; timestamps are ISO-8601 UTC with
milliseconds and `Z`, or epoch milliseconds where the format uses numbers.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # `typing`, `datetime`, `uuid` and `re` are left out of the import of a session open
if TYPE_CHECKING:
    from collections.abc import Container
    from datetime import datetime

ENTRY_ID_RETRIES = 100


def new_uuid() -> str:
    """A fresh lowercase uuid4 (session, message and checkpoint ids)."""
    import uuid  # with `platform`, a few ms that opening a session does not need

    return str(uuid.uuid4())


# Entry ids drawn ahead, 256 from one `os.urandom` call (a writer takes one per entry, and the
# system call costs more than the rest of queuing an entry). `list.pop` is atomic, so threads never
# get the same one; a forked child starts with none, so it never repeats its parent's.
_spare_ids: list[str] = []
_SPARE_BATCH = 256
os.register_at_fork(after_in_child=_spare_ids.clear)


def fresh_entry_id() -> str:
    """Eight random lowercase hex digits: distributed exactly as the first eight of a uuid4 (the
    real CLI's `randomUUID().slice(0, 8)`; no version bits fall there), at a tenth of the cost."""
    try:
        return _spare_ids.pop()
    except IndexError:
        text = os.urandom(4 * _SPARE_BATCH).hex()
        _spare_ids.extend([text[start:start + 8] for start in range(8, len(text), 8)])
        return text[:8]


def new_entry_id(taken: Container[str]) -> str:
    """An 8-hex entry id not in `taken`; a full uuid after 100 collisions, as the real CLI does."""
    for _ in range(ENTRY_ID_RETRIES):
        candidate = fresh_entry_id()
        if candidate not in taken:
            return candidate
    return new_uuid()


_second_prefix: tuple[int, str] = (-1, "")
_last_stamp: tuple[int, str] = (-1, "")


def iso_now() -> str:
    """The current time as `2026-01-02T03:04:05.678Z`."""
    global _second_prefix, _last_stamp
    milliseconds = time.time_ns() // 1_000_000  # `epoch_ms()`, without the call (once per entry)
    if _last_stamp[0] == milliseconds:  # the entries of one commit are often queued within 1 ms
        return _last_stamp[1]
    second = milliseconds // 1000
    if _second_prefix[0] != second:  # a writer stamps many entries per second: format once
        _second_prefix = (second, iso_from_ms(second * 1000)[:-4])
    stamp = f"{_second_prefix[1]}{milliseconds % 1000:03d}Z"
    _last_stamp = (milliseconds, stamp)
    return stamp


_MIN_MS, _MAX_MS = -62_135_596_800_000, 253_402_300_799_999  # 0001-01-01 .. 9999-12-31, UTC


def epoch_ms_value(value: object) -> int | None:
    """`value` as epoch milliseconds `iso_from_ms` can show: an int or float (not a bool) within
    years 1-9999; else None (a file's 1e308 or 10**30 must not reach `datetime`, which raises)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not _MIN_MS <= value <= _MAX_MS:  # also false for NaN
        return None
    return int(value)


def iso_from_ms(milliseconds: int) -> str:
    """Epoch milliseconds as an ISO-8601 UTC string with milliseconds and `Z`, as JavaScript's
    `toISOString` writes it (a four-digit year also before 1000: `strftime("%Y")` would print 1)."""
    from datetime import UTC, datetime  # not at the top: a session open must not load `datetime`

    moment = datetime.fromtimestamp(milliseconds / 1000, tz=UTC)
    return f"{moment.year:04d}" + moment.strftime("-%m-%dT%H:%M:%S.") + f"{milliseconds % 1000:03d}Z"


def epoch_ms() -> int:
    """The current time in epoch milliseconds."""
    return time.time_ns() // 1_000_000


def parse_iso(text: str) -> datetime | None:
    """Parses an ISO timestamp as the format writes it; `None` when it is not one."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
