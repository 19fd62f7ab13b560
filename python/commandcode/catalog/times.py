"""Ordering sessions by time: timestamps parsed (never compared as text) into sort keys."""

from __future__ import annotations

from ..storage.ids import parse_iso


def sort_key(timestamp: str) -> float:
    """Seconds since the epoch of an ISO timestamp (one without a zone counts as UTC); -inf
    when it does not parse, so such sessions sort last."""
    moment = parse_iso(timestamp)
    if moment is None:
        return float("-inf")
    if moment.tzinfo is None:
        from datetime import UTC

        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
