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

# A transcript entry's line: `{"type", "id", "parentId", "timestamp", **fields}` plus `\n`, as UTF-8
# bytes, without building that dict (the writer's per-entry cost).
encode_entry = _native.json_encode_entry

# `json.dumps(value, ensure_ascii=False, default=str)` text (with or without `indent=2`), lone
# surrogates escaped: what the CLI prints for `--json`, without importing `json`.


def dumps_display(value: Any, *, pretty: bool) -> str:
    """`value` as the CLI shows JSON: pretty (2-space) or one line with `", "` separators; values
    JSON has no form for are shown with `str` (and NaN as `NaN`), never refused."""
    if pretty:
        return _native.json_dumps(value, indent=2, separators=(",", ": "), allow_nan=True, default=str)
    return _native.json_dumps(value, separators=(", ", ": "), allow_nan=True, default=str)
