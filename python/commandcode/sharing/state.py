"""What a share leaves on disk (docs/format.md §14.2): the session's `<id>.share.json` (the real
CLI's `url` and `secret`, plus our `sessionId`, `expiresAt`, and for a share on a team service its `shareId` and `server`), and the share server's own files in
`<data dir>/share/`: `server.json` (where the running server listens and its control token) and
`shares.json` (the published shares, so a restarted server serves them again).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any

from ..config.paths import data_dir
from ..errors import UsageError
from ..sessions.files import SessionFiles
from ..storage.durable import atomic_write, ensure_dir
from ..storage.jsonfmt import dumps_pretty

_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def share_dir() -> Path:
    return data_dir() / "share"


def server_file() -> Path:
    return share_dir() / "server.json"


def registry_file() -> Path:
    return share_dir() / "shares.json"


def new_secret() -> str:
    return secrets.token_urlsafe(24)


def parse_expires(text: str | None) -> float | None:
    """`24h`, `30m`, `7d`, `90s`, `2w` as seconds from now (None: never).

    Raises:
        UsageError: not such a duration.
    """
    if text is None or text.strip() in ("", "never"):
        return None
    match = _DURATION.match(text)
    if match is None or int(match.group(1)) == 0:
        raise UsageError(f"--expires {text!r} is not a duration", hint="use e.g. 90s, 30m, 24h, 7d or 2w")
    return int(match.group(1)) * _UNITS[match.group(2)]


def read_json(path: Path) -> Any:
    """A JSON file's value, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path: Path, value: Any) -> None:
    ensure_dir(path.parent)
    atomic_write(path, dumps_pretty(value).encode("utf-8"))


def read_share_file(files: SessionFiles) -> dict[str, Any] | None:
    """The session's `<id>.share.json` when it holds a `url` and a `secret` (as the real CLI reads it)."""
    value = read_json(files.share)
    if isinstance(value, dict) and isinstance(value.get("url"), str) and isinstance(value.get("secret"), str):
        return value
    return None


def write_share_file(files: SessionFiles, url: str, secret: str, expires_at: float | None,
                     service: dict[str, str] | None = None) -> None:
    """`service`: a share on a team service adds its `shareId` and `server`."""
    info: dict[str, Any] = {"url": url, "secret": secret, "sessionId": files.session_id}
    if expires_at is not None:
        info["expiresAt"] = int(expires_at * 1000)
    info.update(service or {})
    atomic_write(files.share, dumps_pretty(info).encode("utf-8"))


def remove_share_file(files: SessionFiles) -> None:
    try:
        os.unlink(files.share)
    except FileNotFoundError:
        pass


def expired(expires_at_ms: object, now: float | None = None) -> bool:
    return isinstance(expires_at_ms, (int, float)) and expires_at_ms <= (time.time() if now is None else now) * 1000
