"""Claude Code transcripts read in place: `ClaudeSession` (a `SessionView`) and finding them.

`open_claude(path)` reads `<claude home>/projects/<slug>/<id>.jsonl` whole (read-only) and
builds: the tree of `uuid`/`parentUuid` entries (a `compact_boundary` hangs under its
`logicalParentUuid`), the leaf and context (`claude_chain.py`), the title (`custom-title`, then
`ai-title`, then a `summary` entry), the file-history checkpoints (`file-history-snapshot` and
`file-history-delta` entries, backups in `file-history/<id>/`), and the subagents
(`<id>/subagents/agent-*.jsonl` with their `.meta.json`). Entry types this reader does not know
are kept (in `entries()`, and as tree rows when they carry a uuid) and counted in `unknown_types`,
never an error. Anything odd (a missing backup, a missing subagent file, a newer `version`) is
one line in `warnings`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import InvalidSessionError
from ..sessions.reader_values import Anomalies, TreeRow
from ..storage.regular import read_regular
from .claude_backups import backup_problem
from .claude_chain import build_chain, find_leaf, regroup_parallel_calls
from .foreign import ForeignSession, jsonl_files_newest_first, read_jsonl, subfolders, text_of
from .locations import claude_file_history, claude_project_dirs, claude_projects

KNOWN_TYPES = frozenset({
    "user", "assistant", "system", "attachment", "summary", "custom-title", "ai-title", "last-prompt",
    "file-history-snapshot", "file-history-delta", "queue-operation", "mode", "cost-state", "api-request",
    "api-request-blob", "api-request-shape", "atis-latch", "tools-used", "tag", "agent-name", "pr-link",
    "worktree-state", "progress",
})
NEWEST_SEEN_VERSION = (2, 1, 332)


def _version(text: Any) -> tuple[int, ...] | None:
    if not isinstance(text, str):
        return None
    try:
        return tuple(int(part) for part in text.split(".")[:3])
    except ValueError:
        return None


class ClaudeCheckpoint:
    """One prompt's file-history snapshot: `message_id` (the user entry), files → backup name."""

    def __init__(self, message_id: str, timestamp: str | None) -> None:
        self.message_id = message_id
        self.timestamp = timestamp
        self.files: dict[str, dict[str, Any]] = {}


class Subagent:
    """One `subagents/agent-<id>.jsonl` file with its `.meta.json`."""

    def __init__(self, agent_id: str, path: Path, meta: dict[str, Any], session: ClaudeSession | None) -> None:
        self.agent_id = agent_id
        self.path = path
        self.meta = meta
        self.session = session

    def to_dict(self) -> dict[str, Any]:
        return {"agent_id": self.agent_id, "path": str(self.path), "description": self.meta.get("description"),
                "agent_type": self.meta.get("agentType"), "tool_use_id": self.meta.get("toolUseId"),
                "messages": self.session.message_count if self.session else 0}


class ClaudeSession(ForeignSession):
    """A Claude Code transcript (see the module docstring)."""

    source = "claude"

    def __init__(self, path: Path, *, subagent: bool = False) -> None:
        super().__init__(path)
        self.is_subagent = subagent
        self.lines, self.skipped_lines = read_jsonl(path)
        self.checkpoints: list[ClaudeCheckpoint] = []
        self.subagents: list[Subagent] = []
        self.unknown_types: dict[str, int] = {}
        self.rewound_to_start = False
        self.version: str | None = None
        self.by_uuid: dict[str, dict[str, Any]] = {}
        entries = [line.value for line in self.lines]
        self._read_envelope(entries)
        self._read_tree()
        self._read_titles(entries)
        self._read_file_history(entries)
        self._read_context(entries)
        if not subagent:
            self._read_subagents(entries)

    # ------------------------------------------------------------------------------------------
    def _read_envelope(self, entries: list[dict[str, Any]]) -> None:
        duplicates = 0
        timestamps = [entry["timestamp"] for entry in entries if isinstance(entry.get("timestamp"), str)]
        if timestamps:
            self._created, self._modified = min(timestamps), max(timestamps)
        for entry in entries:
            entry_type = entry.get("type")
            if entry_type not in KNOWN_TYPES:
                name = str(entry_type)
                self.unknown_types[name] = self.unknown_types.get(name, 0) + 1
            uuid = entry.get("uuid")
            if isinstance(uuid, str):
                duplicates += uuid in self.by_uuid
                self.by_uuid[uuid] = entry
            if not self._cwd and isinstance(entry.get("cwd"), str):
                self._cwd = entry["cwd"]
            if isinstance(entry.get("gitBranch"), str):
                self.git_branch = entry["gitBranch"]
            if isinstance(entry.get("version"), str):
                self.version = entry["version"]
            # A --fork-session copy keeps the source's uuids and rewrites `sessionId`; the copied
            # replies still carry the source's `requestSessionId` (older files: `sessionId`).
            for key in ("requestSessionId", "sessionId"):
                origin = entry.get(key)
                if isinstance(origin, str) and origin != self._id and entry_type in ("user", "assistant") \
                        and self.parent_session_id is None and not entry.get("isSidechain"):
                    self.parent_session_id = origin
        self.anomalies = Anomalies(False, 0, duplicates)
        if self.unknown_types:
            kinds = ", ".join(f"{name} ×{count}" for name, count in sorted(self.unknown_types.items()))
            self.warnings.append(f"entry types this reader does not know were kept as they are: {kinds}")
        version = _version(self.version)
        if version is not None and version > NEWEST_SEEN_VERSION:
            self.warnings.append(f"written by Claude Code {self.version}, newer than the newest read here "
                                 f"({'.'.join(map(str, NEWEST_SEEN_VERSION))}); unknown fields are kept")

    def _read_tree(self) -> None:
        self._rows_raw: list[tuple[str, str | None, str, str, int]] = []
        for line in self.lines:
            entry = line.value
            uuid = entry.get("uuid")
            if not isinstance(uuid, str):
                if entry.get("type") not in KNOWN_TYPES:  # unknown and id-less: shown as a root
                    self._rows_raw.append((f"line-{line.number}", None, str(entry.get("type")),
                                           str(entry.get("timestamp") or ""), line.number))
                continue
            parent = entry.get("parentUuid")
            if parent is None and isinstance(entry.get("logicalParentUuid"), str):
                parent = entry["logicalParentUuid"]
            entry_type = str(entry.get("type"))
            if entry_type == "system" and isinstance(entry.get("subtype"), str):
                entry_type = f"system:{entry['subtype']}"
            elif entry_type == "attachment" and isinstance(entry.get("attachment"), dict):
                entry_type = f"attachment:{entry['attachment'].get('type')}"
            self._rows_raw.append((uuid, parent if isinstance(parent, str) else None, entry_type,
                                   str(entry.get("timestamp") or ""), line.number))

    def _read_titles(self, entries: list[dict[str, Any]]) -> None:
        titles: dict[str, str] = {}
        for entry in entries:
            for entry_type, key in (("custom-title", "customTitle"), ("ai-title", "aiTitle"), ("summary", "summary")):
                if entry.get("type") == entry_type and isinstance(entry.get(key), str) and entry[key].strip():
                    titles[entry_type] = entry[key].strip()
        self._name = titles.get("custom-title") or titles.get("ai-title") or titles.get("summary")

    def _read_file_history(self, entries: list[dict[str, Any]]) -> None:
        by_message: dict[str, ClaudeCheckpoint] = {}
        for entry in entries:
            if entry.get("type") == "file-history-snapshot" and isinstance(entry.get("snapshot"), dict):
                snapshot = entry["snapshot"]
                message_id = str(snapshot.get("messageId") or entry.get("messageId"))
                checkpoint = by_message.get(message_id)
                if checkpoint is None or not entry.get("isSnapshotUpdate"):
                    checkpoint = ClaudeCheckpoint(message_id, snapshot.get("timestamp"))
                    if message_id not in by_message:
                        self.checkpoints.append(checkpoint)
                    else:
                        self.checkpoints[self.checkpoints.index(by_message[message_id])] = checkpoint
                    by_message[message_id] = checkpoint
                tracked = snapshot.get("trackedFileBackups")
                if isinstance(tracked, dict):
                    checkpoint.files.update({str(path): backup for path, backup in tracked.items()
                                             if isinstance(backup, dict)})
            elif entry.get("type") == "file-history-delta" and isinstance(entry.get("backup"), dict):
                target = by_message.get(str(entry.get("snapshotMessageId")))
                if target is not None and isinstance(entry.get("trackingPath"), str):
                    target.files.setdefault(entry["trackingPath"], entry["backup"])
        folder = claude_file_history(self._id)
        problems = {str(backup["backupFileName"]): problem for checkpoint in self.checkpoints
                    for backup in checkpoint.files.values() if backup.get("backupFileName") is not None
                    and (problem := backup_problem(folder, backup["backupFileName"]))}
        missing = sorted(name for name, problem in problems.items() if problem == "is missing")
        if missing:
            self.warnings.append(f"{len(missing)} file-history backup(s) missing from {folder} (first: {missing[0]}); "
                                 "those files cannot be restored")
        refused = sorted(name for name, problem in problems.items() if problem != "is missing")
        if refused:
            self.warnings.append(f"{len(refused)} file-history backup(s) refused (first: {refused[0][:80]!r} "
                                 f"{problems[refused[0]]}); those files cannot be restored")

    def _read_context(self, entries: list[dict[str, Any]]) -> None:
        leaf, self.rewound_to_start = find_leaf(entries, self.by_uuid, self.warnings, sidechain=self.is_subagent)
        self._leaf = leaf
        chain = build_chain(leaf, self.by_uuid, self.warnings) if leaf else []
        chain = regroup_parallel_calls(chain, entries, self.by_uuid, sidechain=self.is_subagent)
        on_path = set(chain)
        self.rows = [TreeRow(uuid, parent, entry_type, timestamp, line, None, uuid in on_path)
                     for uuid, parent, entry_type, timestamp, line in self._rows_raw]
        for uuid in chain:
            message = _context_message(self.by_uuid[uuid])
            if message is not None:
                self.context_ids.append(uuid)
                self.messages.append(message)
            model = (self.by_uuid[uuid].get("message") or {}).get("model")
            if isinstance(model, str) and model != "<synthetic>":
                self._model = model
            effort = self.by_uuid[uuid].get("effort")
            if isinstance(effort, str):
                self._effort = effort
        conversation = [entry for entry in entries if entry.get("type") in ("user", "assistant")
                        and (self.is_subagent or not entry.get("isSidechain")) and not entry.get("isMeta")]
        self._message_count = len(conversation)
        for entry in conversation:
            if entry.get("type") == "user" and not entry.get("isCompactSummary"):
                text = text_of((entry.get("message") or {}).get("content"))
                if text and not text.lstrip().startswith("<"):
                    self._first_message = text
                    break

    def _read_subagents(self, entries: list[dict[str, Any]]) -> None:
        folder = self.path.parent / self._id / "subagents"
        found: dict[str, Path] = {}
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            names = []
        for name in names:
            if name.startswith("agent-") and name.endswith(".jsonl"):
                found[name[len("agent-"):-len(".jsonl")]] = folder / name
        for agent_id, path in found.items():
            meta: dict[str, Any] = {}
            meta_path = path.with_suffix(".meta.json")
            try:
                loaded = json.loads(read_regular(meta_path, limit=1 << 20))  # no-follow, never blocks
                meta = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self.warnings.append(f"subagent {agent_id}: no readable {meta_path.name}")
            try:
                session: ClaudeSession | None = ClaudeSession(path, subagent=True)
            except (OSError, InvalidSessionError) as error:  # unreadable, or no regular file (a folder)
                reason = error.strerror if isinstance(error, OSError) and error.strerror else error
                self.warnings.append(f"subagent {agent_id}: cannot read {path.name}: {reason}")
                session = None
            self.subagents.append(Subagent(agent_id, path, meta, session))
        launched = {str(result.get("agentId")) for entry in entries
                    if isinstance(result := entry.get("toolUseResult"), dict) and isinstance(result.get("agentId"), str)}
        for agent_id in sorted(launched - set(found)):
            self.warnings.append(f"subagent {agent_id} was launched but its file "
                                 f"{self._id}/subagents/agent-{agent_id}.jsonl is missing")

    def describe_extra(self) -> dict[str, Any]:
        extra = super().describe_extra()
        extra.update({
            "version": self.version,
            "rewound_to_start": self.rewound_to_start,
            "checkpoints": len(self.checkpoints),
            "subagents": [subagent.to_dict() for subagent in self.subagents],
            "unknown_types": dict(self.unknown_types),
        })
        return extra


def _context_message(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A user or assistant entry as a model message in Command Code's shape, else None."""
    entry_type = entry.get("type")
    message = entry.get("message")
    if entry_type not in ("user", "assistant") or not isinstance(message, dict):
        return None
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else \
        [dict(block) for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    meta: dict[str, Any] = {"source": "claude-code", "uuid": entry.get("uuid")}
    if entry.get("isCompactSummary"):
        meta["isSummary"] = True
    if entry.get("isMeta"):
        meta["isMeta"] = True
    return {"role": message.get("role") or entry_type, "content": blocks, "meta": meta}


def open_claude(path: Path | str) -> ClaudeSession:
    """Reads one Claude Code transcript (read-only)."""
    return ClaudeSession(Path(path))


def claude_transcripts(cwd: str | None) -> list[Path]:
    """Claude Code transcripts of `cwd`'s project (None: of every project), newest first."""
    return jsonl_files_newest_first(claude_project_dirs(cwd) if cwd is not None else subfolders(claude_projects()))
