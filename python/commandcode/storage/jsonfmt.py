"""JSON text exactly as the real CLI's `JSON.stringify` writes it.

Compact lines for JSONL files and 2-space pretty text (no trailing newline) for sidecars.
Non-ASCII characters are written as themselves; lone surrogates, which `JSON.stringify` escapes
as `\\udXXX`, are escaped the same way so every line is valid UTF-8.

The encoding is native (`_native.json_dumps` and friends): the same text as Python's
`json.JSONEncoder(ensure_ascii=False, ...)` plus that escaping (tests/test_json_native.py holds
the Python version as the oracle), at a fraction of its cost, and without importing `json`.
"""

from __future__ import annotations

from .. import _native

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PRETTY_SEPARATORS = (",", ": ")


def dumps_line(value: Any) -> str:
    """One compact JSON line (no newline), keys in insertion order."""
    return _native.json_dumps(value)


def dumps_pretty(value: Any) -> str:
    """`JSON.stringify(value, null, 2)`: 2-space indent, no trailing newline."""
    return _native.json_dumps(value, indent=2, separators=_PRETTY_SEPARATORS)


# A JSONL record: the compact line plus `\n`, as UTF-8 bytes (no intermediate str).
encode_line = _native.json_encode_line
