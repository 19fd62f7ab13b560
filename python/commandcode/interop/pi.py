"""pi sessions read in place: `PiSession` (a `SessionView`) and finding them.

`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`: a `session` header line (`version`, `id`,
`cwd`, `parentSession` for forks and clones: the source's path), then entries with `id`,
`parentId`, `timestamp` wherever they stand in the line (`custom` entries put `customType` first).
Legacy v1/v2 files are migrated in memory (`pi_migrate.py`). The leaf is the last entry in the
file, as pi has it; the context is pi's `buildSessionContext`: the path from the leaf, the latest
compaction's summary first, then the entries from its `firstKeptEntryId`, then what follows it.

Repair: pi's own forks (`createBranchedSession`) drop the `label` entries of the path and write
them again at its end, so an entry whose parent was a label names a parent that is not in the
file and pi's context stops there. We re-attach such an entry to the entry before it in the file
and say so in `warnings` (`repairs` lists each one), so the context stays whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..sessions.context import BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_PREFIX
from ..sessions.reader_values import Anomalies, TreeRow
from .foreign import ForeignSession, jsonl_files_newest_first, read_jsonl, subfolders, text_of
from .locations import pi_folder_name, pi_sessions
from .pi_migrate import migrate

KNOWN_TYPES = frozenset({"message", "thinking_level_change", "model_change", "compaction", "branch_summary",
                         "custom", "custom_message", "label", "session_info"})
CURRENT_VERSION = 3


class PiSession(ForeignSession):
    """A pi session file (see the module docstring)."""

    source = "pi"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.lines, self.skipped_lines = read_jsonl(path)
        header_line = next((line for line in self.lines if line.value.get("type") == "session"), None)
        self.header_entry: dict[str, Any] = dict(header_line.value) if header_line else {}
        self.entry_lines = [line for line in self.lines if line is not header_line]
        self.entries_v3 = [dict(line.value) for line in self.entry_lines]
        self.version_read = migrate(self.header_entry or None, self.entries_v3)
        self.repairs: list[dict[str, str]] = []
        self.labels: dict[str, str] = {}
        self.unknown_types: dict[str, int] = {}
        self.thinking_level: str | None = None
        if header_line is None:
            self.warnings.append("no session header line; pi would open this file as empty")
        if self.version_read < CURRENT_VERSION:
            self.warnings.append(f"a pi v{self.version_read} file, read as v3 in memory (the file is not rewritten)")
        elif self.version_read > CURRENT_VERSION:
            self.warnings.append(f"a pi v{self.version_read} file, newer than v3; unknown fields are kept")
        if isinstance(self.header_entry.get("id"), str):
            self._id = self.header_entry["id"]
        elif "_" in path.stem:
            self._id = path.stem.split("_", 1)[1]
        self._cwd = str(self.header_entry.get("cwd") or "")
        self._created = self.header_entry.get("timestamp") if isinstance(self.header_entry.get("timestamp"), str) \
            else None
        parent = self.header_entry.get("parentSession")
        if isinstance(parent, str):
            self.parent_session_path = parent
            stem = Path(parent).stem
            self.parent_session_id = stem.split("_", 1)[1] if "_" in stem else stem
        self._build()

    def _build(self) -> None:
        by_id: dict[str, dict[str, Any]] = {}
        duplicates = 0
        previous: str | None = None
        for entry in self.entries_v3:
            entry_type = str(entry.get("type"))
            if entry_type not in KNOWN_TYPES:
                self.unknown_types[entry_type] = self.unknown_types.get(entry_type, 0) + 1
            entry_id = entry.get("id")
            if not isinstance(entry_id, str):
                continue
            parent = entry.get("parentId")
            if isinstance(parent, str) and parent not in by_id and previous is not None:
                self.repairs.append({"entry": entry_id, "missing_parent": parent, "attached_to": previous})
                entry["parentId"] = previous
            duplicates += entry_id in by_id
            by_id[entry_id] = entry
            previous = entry_id
            if entry_type == "label" and isinstance(entry.get("targetId"), str):
                if entry.get("label"):
                    self.labels[entry["targetId"]] = str(entry["label"])
                else:
                    self.labels.pop(entry["targetId"], None)
            elif entry_type == "session_info" and isinstance(entry.get("name"), str):
                self._name = entry["name"].strip() or None
        self.anomalies = Anomalies(False, 0, duplicates)
        for repair in self.repairs:
            self.warnings.append(f"entry {repair['entry']} named a parent {repair['missing_parent']} that is not in "
                                 f"the file (a label pi's fork dropped); re-attached to {repair['attached_to']}")
        if self.unknown_types:
            kinds = ", ".join(f"{name} ×{count}" for name, count in sorted(self.unknown_types.items()))
            self.warnings.append(f"entry types this reader does not know were kept as they are: {kinds}")
        timestamps = [str(entry["timestamp"]) for entry in self.entries_v3 if isinstance(entry.get("timestamp"), str)]
        if timestamps:
            self._modified = max(timestamps)
            self._created = self._created or min(timestamps)
        with_ids = [entry for entry in self.entries_v3 if isinstance(entry.get("id"), str)]
        self._leaf = str(with_ids[-1]["id"]) if with_ids else None
        path: list[dict[str, Any]] = []
        seen: set[str] = set()
        current = by_id.get(self._leaf) if self._leaf else None
        while current is not None and current["id"] not in seen:
            seen.add(current["id"])
            path.append(current)
            parent = current.get("parentId")
            current = by_id.get(parent) if isinstance(parent, str) else None
        path.reverse()
        if current is not None:
            self.anomalies = Anomalies(True, 0, duplicates)
        on_path = {entry["id"] for entry in path}
        numbers = {id(entry): line.number for entry, line in zip(self.entries_v3, self.entry_lines)}
        self.rows = [TreeRow(entry["id"], entry.get("parentId") if isinstance(entry.get("parentId"), str) else None,
                             str(entry.get("type")), str(entry.get("timestamp") or ""), numbers[id(entry)],
                             self.labels.get(entry["id"]), entry["id"] in on_path) for entry in with_ids]
        self._context(path)
        messages = [entry for entry in self.entries_v3 if entry.get("type") == "message"
                    and isinstance(entry.get("message"), dict)]
        self._message_count = len(messages)
        for entry in messages:
            if entry["message"].get("role") == "user":
                self._first_message = text_of(entry["message"].get("content"))
                if self._first_message:
                    break

    def _context(self, path: list[dict[str, Any]]) -> None:
        compaction = None
        for entry in path:
            entry_type = entry.get("type")
            if entry_type == "thinking_level_change" and isinstance(entry.get("thinkingLevel"), str):
                self.thinking_level = self._effort = entry["thinkingLevel"]
            elif entry_type == "model_change" and isinstance(entry.get("modelId"), str):
                self._model = entry["modelId"]
            elif entry_type == "message" and (entry.get("message") or {}).get("role") == "assistant":
                model = entry["message"].get("model")
                self._model = model if isinstance(model, str) else self._model
            elif entry_type == "compaction":
                compaction = entry
        chosen: list[dict[str, Any]] = path
        if compaction is not None:
            position = path.index(compaction)
            first_kept = compaction.get("firstKeptEntryId")
            before = path[:position]
            kept_from = next((index for index, entry in enumerate(before) if entry.get("id") == first_kept), len(before))
            chosen = [compaction, *before[kept_from:], *path[position + 1:]]
        for entry in chosen:
            message = pi_message(entry)
            if message is not None:
                self.context_ids.append(str(entry["id"]))
                self.messages.append(message)

    def describe_extra(self) -> dict[str, Any]:
        extra = super().describe_extra()
        extra.update({"version": self.version_read, "thinking_level": self.thinking_level,
                      "parent_session": self.parent_session_path, "labels": dict(self.labels),
                      "repairs": list(self.repairs), "unknown_types": dict(self.unknown_types)})
        return extra


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "toolCall":
            out.append({"type": "tool_use", "id": block.get("id"), "name": block.get("name"),
                        "input": block.get("arguments") if isinstance(block.get("arguments"), dict) else {}})
        elif block.get("type") == "thinking":
            out.append({"type": "thinking", "thinking": block.get("thinking", ""),
                        "signature": block.get("thinkingSignature", "")})
        elif block.get("type") == "image":
            out.append({"type": "image", "source": {"type": "base64", "media_type": block.get("mimeType"),
                                                    "data": block.get("data")}})
        else:
            out.append(dict(block))
    return out


def pi_message(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A context entry as a message in Command Code's shape (None: not a message)."""
    entry_type = entry.get("type")
    meta: dict[str, Any] = {"source": "pi", "entryId": entry.get("id")}
    if entry_type == "compaction":
        return {"role": "user", "content": [{"type": "text", "text": COMPACTION_PREFIX + str(entry.get("summary", ""))}],
                "meta": {**meta, "isSummary": True}}
    if entry_type == "branch_summary" and entry.get("summary"):
        text = BRANCH_SUMMARY_PREFIX + str(entry["summary"]) + BRANCH_SUMMARY_SUFFIX
        return {"role": "user", "content": [{"type": "text", "text": text}], "meta": {**meta, "isSummary": True}}
    if entry_type == "custom_message":
        return {"role": "user", "content": _blocks(entry.get("content")),
                "meta": {**meta, "isMeta": not entry.get("display"), "customType": entry.get("customType")}}
    message = entry.get("message")
    if entry_type != "message" or not isinstance(message, dict):
        return None
    role = message.get("role")
    if role == "toolResult":
        result = {"type": "tool_result", "tool_use_id": message.get("toolCallId"), "content": _blocks(message.get("content"))}
        return {"role": "user", "content": [result], "meta": {**meta, "isError": bool(message.get("isError"))}}
    if role == "bashExecution":
        text = f"Ran `{message.get('command', '')}`\n```\n{message.get('output', '')}\n```"
        return {"role": "user", "content": [{"type": "text", "text": text}], "meta": {**meta, "bash": True}}
    if role == "custom":
        return {"role": "user", "content": _blocks(message.get("content")),
                "meta": {**meta, "isMeta": not message.get("display"), "customType": message.get("customType")}}
    return {"role": "assistant" if role == "assistant" else "user", "content": _blocks(message.get("content")),
            "meta": meta}


def open_pi(path: Path | str) -> PiSession:
    """Reads one pi session file (read-only)."""
    return PiSession(Path(path))


def pi_transcripts(cwd: str | None) -> list[Path]:
    """pi session files of `cwd` (None: of every project), newest first."""
    root = pi_sessions()
    return jsonl_files_newest_first([root / pi_folder_name(cwd)] if cwd is not None else subfolders(root))
