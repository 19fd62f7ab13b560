"""The durable outbox of a share on a team service (docs/format.md §14.3).

`<data dir>/share/outbox/<share id>.jsonl`: one line per row queued for the service,
`{"seq", "kind": "row"|"reset", "html", "messages"}`, seq 1, 2, 3... with no gap, appended and
fsynced before anything is sent; `<share id>.sent.json` `{"sent": N}` (written atomically) is the
last seq the service acknowledged. Rows are the export's html rows, redacted and path-sanitized
(`render_rows`), never the transcript. Queuing compares the session's rows now with the rows the
page shows (the outbox's rows after its last reset): new rows at the end are appended; anything
else (a rewind, a compaction) queues a `reset` and every row. A line torn by a crash is skipped
(its seq is queued again), so a replayed or resumed outbox sends every row once.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from ..storage.durable import atomic_write, ensure_dir
from .state import share_dir

Entry = dict[str, Any]


def _placeholders(count: int) -> list[Entry]:
    return [{"seq": seq, "kind": "row", "html": "", "messages": 0} for seq in range(1, count + 1)]


def outbox_dir() -> Path:
    return share_dir() / "outbox"


class Outbox:
    """One share's queued rows; safe to use from the publisher thread and the caller's."""

    def __init__(self, share_id: str) -> None:
        self.share_id = share_id
        self.path = outbox_dir() / f"{share_id}.jsonl"
        self.sent_path = outbox_dir() / f"{share_id}.sent.json"
        self.lock = threading.Lock()
        self.entries: list[Entry] = self._read()
        self.sent = self._read_sent()

    def _read(self) -> list[Entry]:
        entries: list[Entry] = []
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return entries
        for line in data.splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line torn by a crash: its rows are queued again
            if not isinstance(entry, dict) or not isinstance(entry.get("seq"), int):
                continue
            if not entries and entry["seq"] > 1:  # queued after an outbox lost here: the service holds those
                entries = _placeholders(entry["seq"] - 1)
            if entry["seq"] == len(entries) + 1:
                entries.append(entry)
        return entries

    def _read_sent(self) -> int:
        try:
            value = json.loads(self.sent_path.read_text(encoding="utf-8")).get("sent")
        except (OSError, ValueError, AttributeError):
            return 0
        return value if isinstance(value, int) and 0 <= value <= len(self.entries) else 0

    def last(self) -> int:
        return len(self.entries)

    def shown(self) -> list[str]:
        """The html rows the page shows once everything is sent: those after the last reset."""
        start = max((index + 1 for index, entry in enumerate(self.entries) if entry["kind"] == "reset"), default=0)
        return [str(entry["html"]) for entry in self.entries[start:]]

    def queue(self, rows: list[str], messages: int, *, after: int = 0) -> int:
        """Appends what the page lacks to show `rows` (durably); returns how many entries.
        `after`: the last seq the service already holds (an outbox lost on this machine starts there)."""
        with self.lock:
            shown = self.shown()
            if self.last() < after:
                self.entries, shown = _placeholders(after), []
                self._write_sent(after)
                new: list[tuple[str, str]] = [("reset", "")] + [("row", html) for html in rows]
            elif rows[:len(shown)] == shown:
                new = [("row", html) for html in rows[len(shown):]]
            else:
                new = [("reset", "")] + [("row", html) for html in rows]
            if not new:
                return 0
            added = [{"seq": self.last() + index + 1, "kind": kind, "html": html, "messages": messages}
                     for index, (kind, html) in enumerate(new)]
            ensure_dir(self.path.parent)
            text = "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in added)
            with open(self.path, "ab") as handle:
                if handle.tell() > 0 and not self._ends_with_newline():
                    handle.write(b"\n")
                handle.write(text.encode("utf-8", "surrogateescape"))
                handle.flush()
                os.fsync(handle.fileno())
            self.entries.extend(added)
            return len(added)

    def _ends_with_newline(self) -> bool:
        with open(self.path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) == b"\n"

    def pending(self, limit_bytes: int = 1 << 20) -> list[Entry]:
        """The next entries to send (at least one when any is pending), up to about `limit_bytes`."""
        with self.lock:
            batch: list[Entry] = []
            size = 0
            for entry in self.entries[self.sent:]:
                size += len(entry["html"]) + 64
                if batch and size > limit_bytes:
                    break
                batch.append(entry)
            return batch

    def acknowledge(self, last: int) -> None:
        """The service holds every row up to `last`."""
        with self.lock:
            if last <= self.sent:
                return
            self._write_sent(min(last, self.last()))

    def _write_sent(self, sent: int) -> None:
        self.sent = sent
        ensure_dir(self.sent_path.parent)
        atomic_write(self.sent_path, json.dumps({"sent": sent}).encode())

    def remove(self) -> None:
        for path in (self.path, self.sent_path):
            path.unlink(missing_ok=True)
