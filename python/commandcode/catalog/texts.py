"""The searchable text of a transcript's entries, read from a byte offset on (appended bytes only).

Each message entry yields `(entry id, timestamp, kind, text)` rows: `user` (visible user text),
`assistant` (assistant text), `tool` (a tool call: its name and input as JSON text) and `result`
(tool results, searched only with `--deep`). Hidden (`isMeta`) messages are not user text and are
left out. A text is indexed up to `MAX_TEXT` characters (`MAX_RESULT` for a tool result), so a
catalog stays a fraction of the transcripts' size. Only whole lines are read: a torn tail waits
for the writer to finish it. Lines that are not JSON are passed over (the listing reports them).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` (and the `re` it loads) costs more than a warm listing
    from collections.abc import Callable, Iterator
    from typing import Any

KINDS = ("user", "assistant", "tool", "result")
SHALLOW_KINDS = ("user", "assistant", "tool")
MAX_TEXT = 32_768
MAX_RESULT = 4_096
CHUNK = 8 << 20
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
            found.append(("user" if role == "user" else "assistant", block["text"][:MAX_TEXT]))
        elif kind == "tool_use":
            import json

            arguments = json.dumps(block.get("input"), ensure_ascii=False, default=str)
            found.append(("tool", f"{block.get('name')} {arguments}"[:MAX_TEXT]))
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


def read_texts(path: str, start: int, advance: Callable[[int], None] | None = None) -> tuple[list[TextRow], int, str | None]:
    """The text rows of the whole lines from byte `start` on, the offset after the last whole
    line read, and the last prompt among them (None when they hold none). `advance(n)` is told
    of every `CHUNK` of lines read (a progress bar's steps).

    Raises:
        OSError: the transcript cannot be read.
    """
    rows: list[TextRow] = []
    prompt: str | None = None
    offset = reported = start
    for line, end in _lines(path, start):
        offset = end
        if advance is not None and offset - reported >= CHUNK:
            advance(offset - reported)
            reported = offset
        entry = _parse(line)
        if entry is None:
            continue
        texts, entry_prompt = entry_texts(entry)
        entry_id, timestamp = entry.get("id"), entry.get("timestamp")
        if not isinstance(entry_id, str):
            continue
        stamp = timestamp if isinstance(timestamp, str) else ""
        rows.extend((entry_id, stamp, kind, text) for kind, text in texts)
        if entry_prompt is not None:
            prompt = entry_prompt
    if advance is not None and offset > reported:
        advance(offset - reported)
    return rows, offset, prompt


def _lines(path: str, start: int) -> Iterator[tuple[bytes, int]]:
    """`(line, offset after its newline)` for each whole line from `start` on."""
    with open(path, "rb") as handle:
        handle.seek(start)
        parts: list[bytes] = []  # the start of a line longer than one chunk, without copying it again
        base = start  # the file offset of the first byte of `parts`
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                return
            cut = chunk.rfind(b"\n")
            if cut < 0:
                parts.append(chunk)
                continue
            data = b"".join([*parts, chunk[:cut]]) if parts else chunk[:cut]
            parts = [chunk[cut + 1:]] if cut + 1 < len(chunk) else []
            cursor = base
            for line in data.split(b"\n"):
                cursor += len(line) + 1
                yield line, cursor
            base = cursor


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
