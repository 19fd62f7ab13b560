"""pi's legacy session formats, brought to v3 in memory only (pi rewrites the file; we never do).

- v1 (no `version`, or `version: 1`): a linear list; each entry gets an id and the previous
  entry as parent, and a compaction's `firstKeptEntryIndex` becomes `firstKeptEntryId`. pi draws
  random ids; ours are derived from the line (`v1-<n>`, 8 characters), so every read of the same
  file names its entries the same way (references and imports stay stable).
- v2: the `hookMessage` role is renamed `custom`.
"""

from __future__ import annotations

from typing import Any


def legacy_id(position: int) -> str:
    return f"v1{position:06x}"[-8:] if position < 0x1000000 else f"v1{position:x}"


def migrate(header: dict[str, Any] | None, entries: list[dict[str, Any]]) -> int:
    """Migrates `entries` (the header excluded, file order) in place; returns the version read."""
    version = header.get("version", 1) if isinstance(header, dict) else 1
    version = version if isinstance(version, int) else 1
    if version < 2:
        previous: str | None = None
        for position, entry in enumerate(entries):
            entry["id"] = legacy_id(position)
            entry["parentId"] = previous
            previous = entry["id"]
        for entry in entries:
            if entry.get("type") == "compaction" and isinstance(entry.get("firstKeptEntryIndex"), int):
                # pi's index counts the header as entry 0
                index = entry.pop("firstKeptEntryIndex") - 1
                if 0 <= index < len(entries):
                    entry["firstKeptEntryId"] = entries[index]["id"]
    if version < 3:
        for entry in entries:
            message = entry.get("message")
            if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
    return version
