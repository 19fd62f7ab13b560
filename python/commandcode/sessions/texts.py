"""The searchable texts of a transcript's entries, and the last prompt read from a transcript's end.

Each message entry yields `(kind, text)` pairs: `user` (visible user text), `assistant`
(assistant text), `tool` (a tool call: its name and input as JSON text) and `result` (tool
results, searched only with `--deep`). Hidden (`isMeta`) messages are not user text and are left
out. User and assistant texts are whole; a tool call is cut at `MAX_TOOL` characters and a tool
result at `MAX_RESULT`. The Rust core reads a Command Code transcript's texts the same way
(`_native.extract_texts`, for the text index and the native scan); `entry_texts` reads one
message of another agent's session (`catalog/foreign_search.py`).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` (and the `re` it loads) costs more than a warm listing
    from typing import Any

KINDS = ("user", "assistant", "tool", "result")
SHALLOW_KINDS = ("user", "assistant", "tool")
MAX_TOOL = 32_768  # as `_native.MAX_TOOL_CHARS`
MAX_RESULT = 4_096  # as `_native.MAX_RESULT_CHARS`
TAIL_CHUNK = 256 << 10

TextRow = tuple[str, str, str, str]  # entry id, timestamp, kind, text


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _result_text(content: Any) -> str:
    return "\n".join(block["text"] for block in _blocks(content) if isinstance(block.get("text"), str))


def entry_texts(entry: dict[str, Any]) -> tuple[list[tuple[str, str]], str | None]:
    """`([(kind, text)], the prompt text or None)` of one transcript entry."""
    message = entry.get("message") if entry.get("type") == "message" else None
    if not isinstance(message, dict):
        return [], None
    meta = message.get("meta")
    if isinstance(meta, dict) and meta.get("isMeta") is True:
        return [], None
    role = message.get("role")
    found: list[tuple[str, str]] = []
    prompt_parts: list[str] = []
    for block in _blocks(message.get("content")):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            if role == "user":
                prompt_parts.append(block["text"])
            found.append(("user" if role == "user" else "assistant", block["text"]))
        elif kind == "tool_use":
            import json

            arguments = json.dumps(block.get("input"), ensure_ascii=False, default=str)
            found.append(("tool", f"{block.get('name')} {arguments}"[:MAX_TOOL]))
        elif kind == "tool_result":
            text = _result_text(block.get("content"))
            if text.strip():
                found.append(("result", text[:MAX_RESULT]))
    return found, ("\n".join(prompt_parts) if prompt_parts else None)


def _parse(line: bytes) -> dict[str, Any] | None:
    if b'"message"' not in line:  # only message entries carry text; most lines are skipped unparsed
        return None
    import json  # not for a warm listing, which reads no text

    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def last_prompt_of(path: str) -> str | None:
    """The last visible user text in a transcript, read backwards from its end (None when the
    file holds none, or cannot be read)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError:
        return None
    with handle:
        end = os.fstat(handle.fileno()).st_size
        carry = b""
        while end > 0:
            begin = max(0, end - TAIL_CHUNK)
            handle.seek(begin)
            data = handle.read(end - begin) + carry
            lines = data.split(b"\n")
            carry = lines.pop(0) if begin > 0 else b""
            for line in reversed(lines):
                entry = _parse(line) if b'"user"' in line else None
                if entry is not None:
                    prompt = entry_texts(entry)[1]
                    if prompt is not None:
                        return prompt
            end = begin
    return None
