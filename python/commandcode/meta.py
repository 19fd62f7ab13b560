"""`<sid>.meta.json`: the session sidecar (format §3).

Updates read, shallow-merge and write the object as the real CLI does, but atomically (temp
file + rename), so a crash never leaves half a file. Keys whose new value is `None` are removed,
like JavaScript's `undefined`. A meta file that is missing reads as `{}`; one that is not a JSON
object reads as `{}` too, and is never overwritten by a merge (the user's bytes stay put).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import InvalidSessionError
from .fsutil import atomic_write
from .jsonfmt import dumps_pretty


def read_meta(path: Path) -> dict[str, Any]:
    """The meta object, or `{}` when the file is missing, unreadable JSON or not an object."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def update_meta(path: Path, patch: dict[str, Any]) -> dict[str, Any]:
    """Merges `patch` into the meta file and returns the new object.

    Raises:
        InvalidSessionError: the existing file is not a JSON object; it is left as it is.
    """
    current: dict[str, Any] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = None
    if text is not None and text.strip():
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            raise InvalidSessionError(
                f"{path} is not a JSON object; refusing to overwrite it",
                hint="fix or remove the meta file by hand",
            )
        current = parsed
    merged = {**current, **patch}
    merged = {key: value for key, value in merged.items() if value is not None}
    atomic_write(path, dumps_pretty(merged).encode("utf-8"))
    return merged
