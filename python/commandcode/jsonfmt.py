"""JSON text exactly as the real CLI's `JSON.stringify` writes it.

Compact lines for JSONL files and 2-space pretty text (no trailing newline) for sidecars.
Non-ASCII characters are written as themselves; lone surrogates, which `JSON.stringify` escapes
as `\\udXXX`, are escaped the same way so every line is valid UTF-8.
"""

from __future__ import annotations

import json
import re
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
# One encoder each, made once: `json.dumps` with options builds a new encoder per call, which
# cost a writer as much as the encoding itself (measured by benches/bench_append.py).
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_PRETTY = json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False)


def _with_escaped_surrogates(text: str) -> str:
    # `isascii` is O(1) on CPython strings and true for nearly every line.
    return text if text.isascii() or not _LONE_SURROGATE.search(text) else _escape_surrogates(text)


def _escape_surrogates(text: str) -> str:
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def escape_lone_surrogates(json_text: str) -> str:
    """JSON text with every lone surrogate written as a `\\udXXX` escape, so it can be encoded as
    UTF-8 (printed, written) and still parses to the same string."""
    return _with_escaped_surrogates(json_text)


def dumps_line(value: Any) -> str:
    """One compact JSON line (no newline), keys in insertion order."""
    return _with_escaped_surrogates(_COMPACT.encode(value))


def dumps_pretty(value: Any) -> str:
    """`JSON.stringify(value, null, 2)`: 2-space indent, no trailing newline."""
    return _with_escaped_surrogates(_PRETTY.encode(value))


def encode_line(value: Any) -> bytes:
    """A JSONL record: the compact line plus `\\n`, as UTF-8 bytes."""
    return (dumps_line(value) + "\n").encode("utf-8")
