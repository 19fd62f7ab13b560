"""Reading JSONL text: the one loop behind every `*.jsonl` file commandcode parses in Python.

Used for the checkpoints file, legacy transcripts being migrated, the prompt history and the
peek at a transcript's header (v3 transcripts themselves are scanned natively). The rules are
JavaScript's, as the real CLI reads these files: lines end at `\\n` only (not at U+2028 or a lone
`\\r`), blank lines are skipped, bytes that are not UTF-8 become U+FFFD, and a line that is not
JSON, or nests deeper than the parser can follow, is skipped (a torn or corrupt line is data,
not an error). A leading byte-order mark is dropped only where the caller says so (a legacy
migration); elsewhere the first line fails to parse, as `JSON.parse` fails on it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from .regular import open_regular


def split_lines(data: bytes | str, *, strip_bom: bool = False) -> list[str]:
    """The non-blank lines of JSONL content, decoded as described above."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    if strip_bom:
        text = text.removeprefix("\ufeff")
    return [line for line in text.split("\n") if line.strip()]


def parse_line(line: str | bytes) -> tuple[bool, Any]:
    """`(True, value)` for a line that is JSON, else `(False, None)`."""
    try:
        return True, json.loads(line)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return False, None


def iter_values(data: bytes | str, *, strip_bom: bool = False) -> Iterator[Any]:
    """Every JSON value of JSONL content, in file order; lines that are not JSON are skipped."""
    for line in split_lines(data, strip_bom=strip_bom):
        ok, value = parse_line(line)
        if ok:
            yield value


def iter_objects(data: bytes | str, *, strip_bom: bool = False) -> Iterator[dict[str, Any]]:
    """The JSON objects of JSONL content, in file order (other values and broken lines skipped)."""
    for value in iter_values(data, strip_bom=strip_bom):
        if isinstance(value, dict):
            yield value


def first_value_in_file(path: str | os.PathLike[str]) -> tuple[bool, Any]:
    """`(True, value)` when the first non-blank line of the file at `path` is JSON, else
    `(False, None)`; reads no further than that line (a transcript may be gigabytes).

    Raises:
        OSError: the file cannot be opened or read, or is no regular file (a FIFO is refused,
            never waited on).
    """
    with os.fdopen(open_regular(path, follow=True), "rb") as handle:
        for raw in handle:
            if raw.strip():
                return parse_line(raw)
    return False, None
