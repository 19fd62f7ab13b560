"""`<data dir>/history.jsonl`: the global prompt history the real CLI's up-arrow reads (format §12).

One `{"p": text, "t": epoch_ms}` record per line, appended whole; a torn last line is ended with a
newline first. Consecutive duplicates are skipped, prompts over 50,000 characters are cut with
`...`, and past 5 MiB the file is rewritten (atomically) down to the newest lines that fit in
2.5 MiB. History is a convenience: failures to record are ignored, and anything but a regular file
in its place (a FIFO, a folder, a symlink) is left alone rather than read or written.

Only the interactive shell records prompts (slash commands included), as the real CLI does; its
`-p` never writes here. `COMMANDCODE_SKIP_PROMPT_HISTORY=1` stops the recording. `recent_prompts`
reads the newest ones back for the shell's up-arrow (the real CLI loads 100).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config.env import skip_prompt_history
from ..config.paths import data_dir
from ..storage.durable import FILE_MODE, atomic_write, ensure_dir, write_all
from ..storage.ids import epoch_ms
from ..storage.jsonfmt import encode_line
from ..storage.jsonl import iter_objects
from ..storage.regular import open_regular, read_all, read_regular

MAX_PROMPT_CHARS = 50_000
ROTATE_AT_BYTES = 5 * 1024 * 1024
ROTATE_TO_BYTES = int(2.5 * 1024 * 1024)
LOADED_AT_START = 100


def record_prompt(prompt: str) -> None:
    """Appends `prompt` to the global history unless it repeats the last one (or
    `COMMANDCODE_SKIP_PROMPT_HISTORY` is set)."""
    if skip_prompt_history():
        return
    if len(prompt) > MAX_PROMPT_CHARS:
        prompt = prompt[:MAX_PROMPT_CHARS] + "..."
    path = data_dir() / "history.jsonl"
    try:
        ensure_dir(path.parent)
        # Never follows a symlink, never blocks on a FIFO: anything but a regular file fails here.
        descriptor = open_regular(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, FILE_MODE)
        try:
            last = _last_prompt(descriptor)
        except BaseException:
            os.close(descriptor)
            raise
        if last == prompt:
            os.close(descriptor)
            return
        record = encode_line({"p": prompt, "t": epoch_ms()})
        try:
            size = os.fstat(descriptor).st_size
            if size and os.pread(descriptor, 1, size - 1) != b"\n":
                record = b"\n" + record  # end a torn last line first, never glue onto it
            write_all(descriptor, record)
        finally:
            os.close(descriptor)
        if path.stat().st_size > ROTATE_AT_BYTES:
            _rotate(path)
    except OSError:
        return


def recent_prompts(limit: int = LOADED_AT_START) -> list[str]:
    """The newest `limit` prompts of the history, oldest first (`[]` when there is none or it is
    not a regular file); `{"text": ...}` records count too, as the real CLI reads them."""
    try:
        raw = read_regular(data_dir() / "history.jsonl")
    except OSError:
        return []
    prompts: list[str] = []
    for record in iter_objects(raw[-ROTATE_AT_BYTES:]):
        text = record.get("p", record.get("text"))
        if isinstance(text, str) and text:
            prompts.append(text)
    return prompts[-limit:]


def _last_prompt(descriptor: int) -> str | None:
    try:
        size = os.fstat(descriptor).st_size
        os.lseek(descriptor, max(0, size - 65536), os.SEEK_SET)
        tail = read_all(descriptor, limit=65536)
    except OSError:
        return None
    for record in reversed(list(iter_objects(tail))):  # the first line may be cut: it does not parse
        text = record.get("p", record.get("text"))
        return text if isinstance(text, str) else None
    return None


def _rotate(path: os.PathLike[str]) -> None:
    lines = read_regular(path).splitlines(keepends=True)
    kept: list[bytes] = []
    size = 0
    for line in reversed(lines):
        if size + len(line) > ROTATE_TO_BYTES:
            break
        kept.append(line)
        size += len(line)
    atomic_write(Path(path), b"".join(reversed(kept)))
