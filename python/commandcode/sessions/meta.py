"""`<sid>.meta.json`: the session sidecar (format §5).

Updates read, shallow-merge and write the object as the real CLI does, but atomically (temp
file + rename), so a crash never leaves half a file. Keys whose new value is `None` are removed,
like JavaScript's `undefined`; keys the patch does not name are kept as they are (a stored `null`,
such as `goal: null`, included). A meta file that is missing reads as `{}`; one that is not a JSON
object reads as `{}` too, and is never overwritten by a merge (the user's bytes stay put). Only a
regular file is read (a FIFO or device in its place must not block or feed the reader), and
nesting too deep to decode counts as not an object.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

from ..errors import InvalidSessionError
from ..storage.durable import atomic_write
from ..storage.jsonfmt import dumps_pretty
from ..storage.regular import read_if_exists

META_LIMIT = 16 << 20
"""A meta file is a few hundred bytes; one over this is not read (a 1 GB sparse one took 10 s
and 2 GB of memory each time a listing or `sessions du` looked at it)."""


def _read_regular(path: Path) -> bytes | None:
    """The bytes of the regular file at `path` (a symlink is read through), or `None` when there
    is none.

    Raises:
        OSError: it cannot be read, is not a regular file (a folder, FIFO or device), or is over
            `META_LIMIT` bytes (`EFBIG`).
    """
    raw = read_if_exists(path, follow=True, limit=META_LIMIT)
    if raw is not None and len(raw) > META_LIMIT:
        raise OSError(errno.EFBIG, f"over {META_LIMIT >> 20} MiB, not a meta file", str(path))
    return raw


def read_meta(path: Path) -> dict[str, Any]:
    """The meta object, or `{}` when the file is missing, unreadable, not JSON or not an object."""
    try:
        raw = _read_regular(path)
        if raw is None:
            return {}
        value = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return {}
    return value if isinstance(value, dict) else {}


def read_meta_for_update(path: Path) -> dict[str, Any]:
    """The meta object an update would merge into: `{}` when the file is missing or blank.

    Raises:
        InvalidSessionError: the file is not a JSON object (an update would refuse to touch it).
        OSError: it cannot be read, or is not a regular file.
    """
    current: dict[str, Any] = {}
    raw = _read_regular(path)
    if raw is not None and raw.strip():
        try:
            parsed = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (ValueError, RecursionError):  # invalid JSON (NaN, Infinity), UTF-8, or too deep
            parsed = None
        if not isinstance(parsed, dict):
            raise InvalidSessionError(
                f"{path} is not a JSON object; refusing to overwrite it",
                hint="fix or remove the meta file by hand",
            )
        current = parsed
    return current


def update_meta(path: Path, patch: dict[str, Any]) -> dict[str, Any]:
    """Merges `patch` into the meta file and returns the new object.

    Raises:
        InvalidSessionError: the existing file is not a JSON object; it is left as it is.
    """
    merged = read_meta_for_update(path)  # `{...old, ...patch}`: existing keys keep their place, new ones go last
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    atomic_write(path, dumps_pretty(merged).encode("utf-8"))
    return merged


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")
