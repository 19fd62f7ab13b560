"""Migrating legacy v1/v2 transcripts to v3 on open, as the real CLI does (format §4.7).

Messages are converted to v3 content blocks, a tool message merges with the user message that
follows it, and everything is re-chained linearly with fresh 8-hex ids. The raw original is kept
as `<sid>.v2.bak` (only if none exists yet) and the new file replaces the old one only through a
temp file and rename, under the writer lock. Lines that are not JSON objects are kept out of the
new file but stay in the backup.

Nothing is lost on a failure path: the backup is complete and fsynced before the transcript is
replaced; a `.v2.bak` that exists with other bytes (an older migration, or a copy cut short by a
crash) is left alone and the original goes to `<sid>.v2.bak.<n>` instead; a process that waited
for another one's migration finds v3 and writes nothing; a meta file that is not an object is
left as it is.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InvalidSessionError, SessionLockedError
from ..storage.durable import atomic_write, create_new_file, fsync_dir
from ..storage.ids import epoch_ms, iso_from_ms, new_entry_id, new_uuid, parse_iso
from ..storage.jsonfmt import encode_line
from ..storage.jsonl import iter_objects
from ..storage.regular import read_regular
from .files import SessionFiles
from .format import build_header, created_timestamp, header_timestamp
from .lock import WriterLock
from .meta import read_meta, update_meta
from .reader import scan

LEGACY_FORMATS = ("v1", "v2")
LOCK_WAIT_SECONDS = 10.0
_MAX_BACKUPS = 1000


def migrate_legacy(files: SessionFiles) -> None:
    """Rewrites a v1/v2 transcript as v3 in place (backup first, then atomic replace).

    The file is scanned again under the lock (the scan that found the legacy format is stale by
    then), so a file another process migrated meanwhile is left alone.

    Raises:
        SessionLockedError: another process held the transcript's writer lock for too long.
        OSError: the backup or the new transcript could not be written (the original is intact).
    """
    transcript = files.transcript
    with _lock(transcript):
        current = scan(files, use_index=False)
        if current.format not in LEGACY_FORMATS:
            return
        raw = read_regular(transcript, follow=True)
        records = _parse_records(raw)
        meta = read_meta(files.meta)
        messages = _merge_tool_messages([message for record in records if (message := _convert(record)) is not None])
        _attach_model(messages, meta.get("model"))
        header = _header(files, meta, records, transcript)
        lines = [encode_line(header)]
        taken: set[str] = set()
        parent: str | None = None
        for message in messages:
            entry_id = new_entry_id(taken)
            taken.add(entry_id)
            entry: dict[str, Any] = {"type": "message", "id": entry_id, "parentId": parent,
                                     "timestamp": message.pop("_timestamp")}
            model = message.pop("_model", None)
            entry["message"] = message
            if model:
                entry["model"] = model
            lines.append(encode_line(entry))
            parent = entry_id
        _keep_original(files, raw)
        atomic_write(transcript, b"".join(lines))
        entrypoint = current.legacy_entrypoint
        if entrypoint and "entrypoint" not in meta:
            with contextlib.suppress(InvalidSessionError):  # a meta that is not an object stays as it is
                update_meta(files.meta, {"entrypoint": entrypoint})


@contextlib.contextmanager
def _lock(transcript: Path) -> Iterator[None]:
    """Holds the writer lock, waiting up to `LOCK_WAIT_SECONDS` for another process's migration."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        lock = WriterLock(transcript)
        try:
            lock.acquire()
            break
        except SessionLockedError as error:
            if error.holder_pid == os.getpid() or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
    try:
        yield
    finally:
        lock.release()


def _keep_original(files: SessionFiles, raw: bytes) -> Path:
    """Makes sure the raw original is on disk, complete and fsynced, before the rewrite.

    It goes to `<sid>.v2.bak` unless that exists; an existing one is never overwritten. If it
    holds other bytes, the original goes to the first free `<sid>.v2.bak.<n>`.
    """
    first = files.legacy_backup
    for number in range(_MAX_BACKUPS):
        path = first if number == 0 else first.with_name(f"{first.name}.{number}")
        try:
            if read_regular(path) == raw:
                return path
            continue
        except FileNotFoundError:
            pass
        create_new_file(path, raw)
        fsync_dir(files.directory)
        return path
    raise FileExistsError(f"{first}: {_MAX_BACKUPS} legacy backups exist already; not migrating")


def _parse_records(raw: bytes) -> list[dict[str, Any]]:
    """The JSON objects among the lines (lines that are not kept out of the new file, but stay
    in the backup); a leading byte-order mark is dropped."""
    return list(iter_objects(raw, strip_bom=True))


def _header(files: SessionFiles, meta: dict[str, Any], records: list[dict[str, Any]], transcript: Path) -> dict[str, Any]:
    cwd = next((record["cwd"] for record in records if isinstance(record.get("cwd"), str)), os.getcwd())
    parent = meta.get("parentSessionId")
    parent_session = os.path.abspath(files.directory / f"{parent}.jsonl") if isinstance(parent, str) and parent else None
    return build_header(files.session_id, header_timestamp(meta.get("createdAt"), transcript), cwd,
                        parent_session=parent_session)


def _timestamp(record: dict[str, Any]) -> str:
    """A legacy record's time by the header's rule (`format.created_timestamp`), else now."""
    return created_timestamp(record.get("timestamp")) or iso_from_ms(epoch_ms())


def _convert(record: dict[str, Any]) -> dict[str, Any] | None:
    role = record.get("role")
    if role not in ("user", "assistant", "tool"):
        return None
    raw_metadata = record.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    blocks = [_convert_block(block) for block in _as_blocks(record.get("content"))]
    meta: dict[str, Any] = {"messageId": metadata.get("messageId") if isinstance(metadata.get("messageId"), str) else new_uuid()}
    parsed = parse_iso(_timestamp(record))
    if role != "tool" and parsed is not None:
        meta["createdAt"] = int(parsed.timestamp() * 1000)
    meta["source"] = {"user": "user", "assistant": "model", "tool": "tool"}[role]
    if metadata.get("isMeta"):
        meta["isMeta"] = True
    return {"role": role, "content": [block for block in blocks if block is not None], "meta": meta,
            "_timestamp": _timestamp(record), "_model": metadata.get("model") if isinstance(metadata.get("model"), str) else None}


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _convert_block(block: Any) -> dict[str, Any] | None:
    """An AI-SDK (v2) or Anthropic-style (v1) block as a v3 content block."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "reasoning":
        return {"type": "thinking", "thinking": str(block.get("text", "")), "signature": ""}
    if kind == "tool-call":
        return {"type": "tool_use", "id": block.get("toolCallId"), "name": block.get("toolName"), "input": block.get("input", {})}
    if kind == "tool-result":
        output = block.get("output")
        value = output.get("value") if isinstance(output, dict) else output
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return {"type": "tool_result", "tool_use_id": block.get("toolCallId"), "content": [{"type": "text", "text": text}]}
    if kind == "image" and isinstance(block.get("image"), str) and block["image"].startswith("data:"):
        header, _, data = block["image"].partition(",")
        media_type = header[len("data:"):].split(";")[0]
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return block


def _merge_tool_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A tool message and the user message after it become one user message."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        previous = merged[-1] if merged else None
        if previous is not None and previous["role"] == "tool":
            if message["role"] in ("user", "tool"):
                previous["content"].extend(message["content"])
                previous["role"] = "tool" if message["role"] == "tool" else "user"
                continue
            previous["role"] = "user"
        merged.append(message)
    if merged and merged[-1]["role"] == "tool":
        merged[-1]["role"] = "user"
    return merged


def _attach_model(messages: list[dict[str, Any]], model: Any) -> None:
    if not isinstance(model, str) or not model:
        return
    for message in reversed(messages):
        if message["role"] == "assistant":
            message["_model"] = model
            return
