"""`<data dir>/history.jsonl`: the global prompt history the real CLI's up-arrow reads (format §6).

One `{"p": text, "t": epoch_ms}` record per line, appended whole; a torn last line is ended with a
newline first. Consecutive duplicates are skipped, prompts over 50,000 characters are cut with
`...`, and past 5 MiB the file is rewritten (atomically) down to the newest lines that fit in
2.5 MiB. History is a convenience: failures to record are ignored, and anything but a regular file
in its place (a FIFO, a folder, a symlink) is left alone rather than read or written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..config.paths import data_dir
from ..storage.durable import FILE_MODE, atomic_write, ensure_dir, write_all
from ..storage.ids import epoch_ms
from ..storage.jsonfmt import encode_line
from ..storage.jsonl import iter_objects

MAX_PROMPT_CHARS = 50_000
ROTATE_AT_BYTES = 5 * 1024 * 1024
ROTATE_TO_BYTES = int(2.5 * 1024 * 1024)


def record_prompt(prompt: str) -> None:
    """Appends `prompt` to the global history unless it repeats the last one."""
    if len(prompt) > MAX_PROMPT_CHARS:
        prompt = prompt[:MAX_PROMPT_CHARS] + "..."
    path = data_dir() / "history.jsonl"
    try:
        ensure_dir(path.parent)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return  # reading a FIFO would block, and a symlink is never followed
        except FileNotFoundError:
            pass
        if _last_prompt(path) == prompt:
            return
        record = encode_line({"p": prompt, "t": epoch_ms()})
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, FILE_MODE)
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


def _last_prompt(path: os.PathLike[str]) -> str | None:
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 65536))
            tail = handle.read()
    except OSError:
        return None
    for record in reversed(list(iter_objects(tail))):  # the first line may be cut: it does not parse
        text = record.get("p", record.get("text"))
        return text if isinstance(text, str) else None
    return None


def _rotate(path: os.PathLike[str]) -> None:
    with open(path, "rb") as handle:
        lines = handle.read().splitlines(keepends=True)
    kept: list[bytes] = []
    size = 0
    for line in reversed(lines):
        if size + len(line) > ROTATE_TO_BYTES:
            break
        kept.append(line)
        size += len(line)
    atomic_write(Path(path), b"".join(reversed(kept)))
