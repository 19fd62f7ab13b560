"""Per-turn W3C trace ids and `meta.traceIds`.

Every turn gets a fresh trace id: 32 lowercase hex characters, never all zeros (W3C Trace
Context). The session's meta keeps them in `traceIds`, newest last, appended only when it differs
from the last one, at most `MAX_TRACE_IDS` (the real CLI keeps 10; we keep 100 so a long session's
turns stay findable; its readers take the list as it is).
"""

from __future__ import annotations

import secrets
from typing import Any

MAX_TRACE_IDS = 100


def new_trace_id() -> str:
    """A random W3C trace id."""
    while True:
        trace_id = secrets.token_hex(16)
        if trace_id.strip("0"):
            return trace_id


def is_trace_id(value: object) -> bool:
    return isinstance(value, str) and len(value) == 32 and all(c in "0123456789abcdef" for c in value) and bool(value.strip("0"))


def with_trace_id(meta: dict[str, Any], trace_id: str) -> list[str]:
    """`meta.traceIds` with `trace_id` appended (kept when it is already the last), cut to the
    newest 100; entries that are not trace ids are dropped."""
    current = meta.get("traceIds")
    ids = [value for value in current if is_trace_id(value)] if isinstance(current, list) else []
    if not ids or ids[-1] != trace_id:
        ids.append(trace_id)
    return ids[-MAX_TRACE_IDS:]


def trace_ids(meta: dict[str, Any]) -> list[str]:
    """The trace ids a meta records, oldest first."""
    current = meta.get("traceIds")
    return [value for value in current if is_trace_id(value)] if isinstance(current, list) else []
