"""Cloning a session's active branch into a new session (format §4.8, ref §8).

`clone_files(source_session, target)` writes only the path from the root to the leaf:

- its entries other than labels, in path order, relinked into a straight chain (each one's
  `parentId` is the entry before it), ids and every other key kept;
- then the path's `label` entries, chained after them, so labels survive; a label whose target
  is not in the clone is left out, and no kept entry ever points at an entry that is not in the
  new file (pi 0.73 drops labels while the next entry still points at one, and loses a turn);
- a compaction whose `firstKeptEntryId` names a label (now moved to the end) names the first
  entry after that label instead, so the clone's context is the source's, message for message;
- a header with `parentSession` (the source transcript's absolute path), no checkpoints and no
  backups; the meta gets `title` (the path's latest name, else the source's title), `model`,
  `parentSessionId`, `forkedAt`. Written at once, even before any assistant entry;
- the sub-agent runs launched by a call on the path (format §21), copied beside the clone.

Entries are read and written in batches, so a clone of a huge session stays in bounded memory.
"""

from __future__ import annotations

import os
from typing import Any

from ..storage.durable import write_all
from ..storage.ids import iso_now
from ..storage.jsonfmt import encode_entry, encode_line
from .files import SessionFiles
from .fork import CopyResult
from .format import build_header
from .lineage import EntryIds, NewSessionFiles, lineage_meta
from .reader import Session

_BATCH = 2000


def clone_files(session: Session, target: SessionFiles, *, name: str | None = None) -> CopyResult:
    """Clones the active branch of `session` (opened by the caller) into the new session `target`;
    `name` (a `session_info` entry after the chain, and `meta.title`) names it, else it keeps the
    path's name.

    Raises:
        FileExistsError: `target` exists already (nothing was touched).
        OSError, SessionChangedError: a file could not be read or written, or the source changed
            under the read (nothing was left behind).
    """
    path_ids = session.path_ids()
    remap: dict[str, str] = {}  # label id → the first non-label path entry after it
    pending: list[str] = []
    labels: list[dict[str, Any]] = []
    kept: set[str] = set()
    previous: str | None = None
    title: str | None = None
    calls: set[str] = set()  # the `agent` calls (any tool call) on the path: their sub-agent runs come along
    with NewSessionFiles(target) as new:
        descriptor = new.open_transcript()
        try:
            header = build_header(target.session_id, iso_now(), session.cwd, parent_session=os.path.abspath(session.path))
            write_all(descriptor, encode_line(header))
            for start in range(0, len(path_ids), _BATCH):
                lines: list[bytes] = []
                for entry in session.read_entries(path_ids[start:start + _BATCH]):
                    if entry.get("type") == "label":
                        labels.append(entry)
                        pending.append(entry["id"])
                        continue
                    remap.update((label_id, entry["id"]) for label_id in pending)
                    pending.clear()
                    if entry.get("type") == "session_info" and isinstance(entry.get("name"), str) and entry["name"].strip():
                        title = entry["name"].strip()
                    if entry.get("type") == "compaction" and entry.get("firstKeptEntryId") in remap:
                        entry["firstKeptEntryId"] = remap[entry["firstKeptEntryId"]]
                    entry["parentId"] = previous
                    previous = entry["id"]
                    kept.add(previous)
                    calls.update(_tool_use_ids(entry))
                    lines.append(encode_line(entry))
                write_all(descriptor, b"".join(lines))
            tail: list[bytes] = []
            for entry in labels:
                if entry.get("targetId") in kept:
                    entry["parentId"] = previous
                    previous = entry["id"]
                    kept.add(previous)  # a label of this label is kept too
                    tail.append(encode_line(entry))
            if name:
                tail.append(encode_entry("session_info", EntryIds(session).new(), previous, iso_now(), {"name": name}))
                title = name
            write_all(descriptor, b"".join(tail))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        if title is None:
            source_title = session.meta.get("title")
            title = source_title.strip() if isinstance(source_title, str) and source_title.strip() else None
        if calls:
            from .subagent_copy import copy_subagent_runs

            copy_subagent_runs(session.files, new, tool_use_ids=calls)
        new.write_meta(lineage_meta(session, title=title, named=False, branch_point=None))
        new.publish()
    return CopyResult(target, session.id, len(session.skipped_lines), session.leaf_id)


def _tool_use_ids(entry: dict[str, Any]) -> list[str]:
    """The ids of the tool calls an assistant message entry makes."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) and message.get("role") == "assistant" else None
    return [block["id"] for block in content if isinstance(block, dict) and block.get("type") == "tool_use"
            and isinstance(block.get("id"), str)] if isinstance(content, list) else []
