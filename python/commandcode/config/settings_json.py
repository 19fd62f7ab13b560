"""The JSON text of one settings file: bytes to an object with exact error positions, and back.

Owns what counts as a well-formed settings file. Its bytes are UTF-8, optionally after a byte-order
mark; empty or blank means `{}`; otherwise they hold one JSON object and nothing else, with no
`NaN`/`Infinity`, no number too large for a double (Python's `json` accepts both, JSON does
not) and no integer too long for the interpreter to convert. Every refusal is a `SettingsError`
reading `<file>:<line>:<column>: <what>`, columns counted in characters, 1-based. Written text
is the real CLI's (`JSON.stringify(value, null, 2)`) plus a trailing newline, after the file's
BOM when it had one; a value with no JSON text (`NaN`, bytes, a set) is refused before writing.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..errors import SettingsError
from ..storage.jsonfmt import dumps_pretty

BOM = b"\xef\xbb\xbf"
FIX_HINT = "fix the file by hand; commandcode never overwrites a file it cannot read"


class _NotJson(ValueError):
    """A token Python's `json` accepts but JSON does not (`NaN`, `Infinity`, `1e400`)."""

    def __init__(self, token: str, reason: str) -> None:
        super().__init__(reason)
        self.token, self.reason = token, reason


def _reject_constant(name: str) -> Any:
    raise _NotJson(name, f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson(text, f"the number {text} is out of range")
    return value


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # over the interpreter's digit limit (4,300 by default)
        raise _NotJson(text, f"the number {text[:12]}... has too many digits ({len(text)})") from None


def _token_index(text: str, token: str) -> int:
    """Where `token` first appears in `text` outside a string (the text is otherwise valid JSON)."""
    pattern = re.compile(r'"(?:[^"\\]|\\.)*"|(' + re.escape(token) + ")", re.DOTALL)
    for found in pattern.finditer(text):
        if found.group(1) is not None:
            return found.start(1)
    return 0


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of the character at `index`."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def parse_settings(raw: bytes, shown: str) -> tuple[dict[str, Any], bool, list[str]]:
    """The object in a settings file's bytes, whether they start with a UTF-8 BOM, and the keys
    that appear more than once in one object (the last value counts, as in `JSON.parse`; a
    rewrite would drop the others, so writers refuse such a file).

    Raises:
        SettingsError: the bytes are not one JSON object (`<shown>:<line>:<column>: <what>`).
    """
    bom = raw.startswith(BOM)
    body = raw[len(BOM):] if bom else raw
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        good = body[: error.start].decode("utf-8")
        line, column = _position(good, len(good))
        raise SettingsError(f"{shown}:{line}:{column}: not valid UTF-8 (byte 0x{body[error.start]:02x})",
                            hint=FIX_HINT) from None
    if not text.strip():
        return {}, bom, []
    repeated: list[str] = []

    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        built: dict[str, Any] = {}
        for key, item in pairs:
            if key in built and key not in repeated:
                repeated.append(key)
            built[key] = item
        return built

    try:
        value = json.loads(text, object_pairs_hook=build, parse_constant=_reject_constant,
                           parse_float=_finite_float, parse_int=_whole_number)
    except _NotJson as error:
        line, column = _position(text, _token_index(text, error.token))
        raise SettingsError(f"{shown}:{line}:{column}: {error.reason}", hint=FIX_HINT) from None
    except json.JSONDecodeError as error:
        raise SettingsError(f"{shown}:{error.lineno}:{error.colno}: {error.msg}", hint=FIX_HINT) from None
    except RecursionError:
        raise SettingsError(f"{shown}: nested too deeply to read", hint=FIX_HINT) from None
    if not isinstance(value, dict):
        line, column = _position(text, len(text) - len(text.lstrip()))
        raise SettingsError(f"{shown}:{line}:{column}: the top level is {kind(value)}, not an object",
                            hint=FIX_HINT)
    return value, bom, repeated


def settings_bytes(data: dict[str, Any], bom: bool, shown: str) -> bytes:
    """The file's new content: 2-space indented JSON and a newline, after a BOM when `bom`.

    Raises:
        SettingsError: something in `data` has no JSON text (`NaN`, bytes, a set, ...).
    """
    try:
        text = dumps_pretty(data)
    except (TypeError, ValueError) as error:
        raise SettingsError(f"cannot write {shown}: the new value is not JSON ({error})") from None
    return (BOM if bom else b"") + (text + "\n").encode("utf-8")
