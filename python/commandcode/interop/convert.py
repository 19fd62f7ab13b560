"""Turning a Claude Code or pi session into Command Code v3 entries (docs/format.md §19).

`convert(session)` returns the v3 entries in file order, the active path last so that its last
entry is the leaf (the real CLI's rule: the last valid line), plus the Claude file-history
checkpoints to import. Every message carries `meta.messageId` (the source's uuid or entry id)
so checkpoints can name the prompt they belong to.

- pi: entries map one to one (v3 is pi's format family): `thinking_level_change` becomes
  `effort_change`, `model_change` names `provider/modelId`, messages get Command Code blocks
  (`toolCall` → `tool_use`, a `toolResult` → a user `tool_result`, `bashExecution` → text).
  The repaired parents (see `pi.py`) are the ones written.
- Claude Code: conversation entries (`user`, `assistant`, `compact_boundary`) are kept;
  attachments, bookkeeping and sidechain entries are not messages. On the active path, the
  parallel calls of one `message.id` become one assistant message and their results one user
  message (what the API was sent); a `compact_boundary` with its summary becomes a `compaction`
  (`firstKeptEntryId`: the preserved segment's head, else the compaction itself). Other
  branches hang under their nearest kept ancestor. Subagents are not entries: `import` writes
  them as sub-agent runs beside the session (`claude_runs.py`). Imports made before kept each
  as a `custom` entry (`customType: SUBAGENT_TYPE`, its messages in `data`) under the message
  that launched it; `/tree` still reads those.
"""

from __future__ import annotations

from typing import Any

from ..storage.ids import new_entry_id
from .claude_code import ClaudeSession, _context_message
from .foreign import ForeignSession, text_of
from .pi import PiSession, pi_message

SUBAGENT_TYPE = "commandcode.import.subagent"  # the custom entries of older imports (read, never written)


class Converted:
    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.ids: dict[str, str] = {}  # source id -> our entry id
        self.model: str | None = None


def _entry(kind: str, entry_id: str, parent: str | None, timestamp: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": timestamp, **fields}


def convert(session: ForeignSession) -> Converted:
    if isinstance(session, PiSession):
        return _convert_pi(session)
    if isinstance(session, ClaudeSession):
        return _convert_claude(session)
    raise TypeError(f"cannot convert {type(session).__name__}")


def _convert_pi(session: PiSession) -> Converted:
    out = Converted()
    for entry in session.entries_v3:
        if isinstance(entry.get("id"), str):
            out.ids[entry["id"]] = entry["id"] if len(entry["id"]) == 8 else new_entry_id(set(out.ids.values()))
    for entry in session.entries_v3:
        source_id = entry.get("id")
        if not isinstance(source_id, str):
            continue
        parent = entry.get("parentId")
        base = (entry.get("type"), out.ids[source_id], out.ids.get(parent) if isinstance(parent, str) else None,
                str(entry.get("timestamp") or ""))
        kind = base[0]
        fields: dict[str, Any] = {}
        if kind == "message":
            message = pi_message(entry)
            if message is None:
                continue
            message["meta"] = {"messageId": source_id, "source": "import:pi"}
            fields["message"] = message
            source_message = entry.get("message") or {}
            if source_message.get("role") == "assistant":
                usage: dict[str, Any] = source_message["usage"] if isinstance(source_message.get("usage"), dict) else {}
                fields["usage"] = {"inputTokens": usage.get("input", 0), "outputTokens": usage.get("output", 0),
                                   "cacheReadTokens": usage.get("cacheRead", 0),
                                   "cacheWriteTokens": usage.get("cacheWrite", 0),
                                   "costUsd": (usage.get("cost") or {}).get("total", 0)}
                if isinstance(source_message.get("model"), str):
                    fields["model"] = f"{source_message.get('provider')}/{source_message['model']}" \
                        if source_message.get("provider") else source_message["model"]
                    out.model = fields["model"]
        elif kind == "thinking_level_change":
            kind, fields = "effort_change", {"effort": entry.get("thinkingLevel")}
        elif kind == "model_change":
            fields = {"model": f"{entry.get('provider')}/{entry.get('modelId')}"}
            out.model = fields["model"]
        elif kind == "compaction":
            kept = entry.get("firstKeptEntryId")
            fields = {"summary": entry.get("summary", ""), "firstKeptEntryId": out.ids.get(kept, base[1])
                      if isinstance(kept, str) else base[1], "tokensBefore": entry.get("tokensBefore", 0)}
            if isinstance(entry.get("details"), dict):
                fields["details"] = entry["details"]
        elif kind == "branch_summary":
            from_id = entry.get("fromId")
            fields = {"fromId": out.ids.get(from_id, "root") if isinstance(from_id, str) else "root",
                      "summary": entry.get("summary", "")}
            if isinstance(entry.get("details"), dict):
                fields["details"] = entry["details"]
        elif kind == "label":
            target = entry.get("targetId")
            fields = {"targetId": out.ids.get(target, target) if isinstance(target, str) else target}
            if entry.get("label"):
                fields["label"] = entry["label"]
        elif kind == "session_info":
            fields = {"name": entry["name"]} if isinstance(entry.get("name"), str) else {}
        elif kind == "custom_message":
            fields = {"customType": entry.get("customType"), "content": entry.get("content"),
                      "display": bool(entry.get("display"))}
        else:  # `custom` and types we do not know: kept as a custom entry, never sent to the model
            fields = {"customType": entry.get("customType") if kind == "custom" else f"pi.{kind}",
                      "data": entry.get("data") if kind == "custom" else entry}
            kind = "custom"
        out.entries.append(_entry(str(kind), base[1], base[2], base[3], **fields))
    return out


def _claude_fields(session: ClaudeSession, uuids: list[str]) -> dict[str, Any]:
    """The `message` (and usage, model) of one or more Claude entries merged into one message."""
    messages = [_context_message(session.by_uuid[uuid]) for uuid in uuids]
    first = messages[0] or {"role": "user", "content": []}
    content = [block for message in messages if message for block in message["content"]]
    fields: dict[str, Any] = {"message": {"role": first["role"], "content": content,
                                          "meta": {"messageId": uuids[0], "source": "import:claude"}}}
    source = session.by_uuid[uuids[0]].get("message") or {}
    if first["role"] == "assistant":
        usage: dict[str, Any] = source["usage"] if isinstance(source.get("usage"), dict) else {}
        fields["usage"] = {"inputTokens": usage.get("input_tokens", 0), "outputTokens": usage.get("output_tokens", 0),
                           "cacheReadTokens": usage.get("cache_read_input_tokens", 0),
                           "cacheWriteTokens": usage.get("cache_creation_input_tokens", 0)}
        if isinstance(source.get("model"), str) and source["model"] != "<synthetic>":
            fields["model"] = f"anthropic/{source['model']}"
        effort = session.by_uuid[uuids[0]].get("effort")
        if isinstance(effort, str):
            fields["effort"] = effort
    return fields


def _claude_groups(session: ClaudeSession) -> list[list[str]]:
    """The active path as message groups: parallel calls and their results merged."""
    groups: list[list[str]] = []
    previous_key: tuple[str, str] | None = None
    for uuid in session.context_ids:
        entry = session.by_uuid[uuid]
        message = entry.get("message") or {}
        content = message.get("content")
        if entry.get("type") == "assistant" and isinstance(message.get("id"), str):
            key: tuple[str, str] | None = ("assistant", message["id"])
        elif entry.get("type") == "user" and isinstance(content, list) and content and all(
                isinstance(block, dict) and block.get("type") == "tool_result" for block in content):
            key = ("results", "")
        else:
            key = None
        if key is not None and key == previous_key:
            groups[-1].append(uuid)
        else:
            groups.append([uuid])
        previous_key = key
    return groups


def _convert_claude(session: ClaudeSession) -> Converted:
    out = Converted()
    taken: set[str] = set()

    def new_id() -> str:
        entry_id = new_entry_id(taken)
        taken.add(entry_id)
        return entry_id

    kept_types = ("user", "assistant")
    summaries = {uuid for uuid, entry in session.by_uuid.items() if entry.get("isCompactSummary")}

    def nearest_kept(uuid: str | None) -> str | None:
        seen: set[str] = set()
        while isinstance(uuid, str) and uuid not in seen:
            seen.add(uuid)
            if uuid in out.ids:
                return out.ids[uuid]
            entry = session.by_uuid.get(uuid)
            if entry is None:
                return None
            uuid = entry.get("parentUuid") if entry.get("parentUuid") is not None else entry.get("logicalParentUuid")
        return None

    def boundary_fields(boundary: dict[str, Any], own_id: str) -> dict[str, Any]:
        summary_entry = _summary_of(session, boundary)
        summary = text_of((summary_entry or {}).get("message", {}).get("content")) or ""
        metadata: dict[str, Any] = boundary["compactMetadata"] if isinstance(boundary.get("compactMetadata"), dict) \
            else {}
        segment = metadata.get("preservedSegment")
        head = segment.get("headUuid") if isinstance(segment, dict) else None
        # The kept segment is written after the compaction (the active path is linear), so the
        # compaction keeps nothing before itself; `head` only tells that a segment was kept.
        fields = {"summary": summary, "firstKeptEntryId": own_id, "tokensBefore": metadata.get("preTokens", 0)}
        if isinstance(head, str):
            fields["details"] = {"preservedSegment": True}
        return fields

    active = _claude_groups(session)
    active_boundary = _active_chain_boundary(session)
    # the boundary that starts the active path is written once, as the path's root, below
    active_uuids = {uuid for group in active for uuid in group} | set(active_boundary)
    # off the active path first (file order), so the active path's last entry is the last line
    for line in session.lines:
        entry = line.value
        uuid = entry.get("uuid")
        if not isinstance(uuid, str) or uuid in active_uuids or uuid in summaries or entry.get("isSidechain") \
                or session.by_uuid.get(uuid) is not entry:
            continue
        if entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
            own = new_id()
            out.ids[uuid] = own
            out.entries.append(_entry("compaction", own, nearest_kept(entry.get("logicalParentUuid")),
                                      str(entry.get("timestamp") or ""), **boundary_fields(entry, own)))
        elif entry.get("type") in kept_types and _context_message(entry) is not None:
            own = new_id()
            out.ids[uuid] = own
            out.entries.append(_entry("message", own, nearest_kept(entry.get("parentUuid")),
                                      str(entry.get("timestamp") or ""), **_claude_fields(session, [uuid])))
    parent: str | None = None
    boundary = next((session.by_uuid[uuid] for uuid in active_boundary), None)
    if boundary is not None:
        own = new_id()
        out.ids[str(boundary["uuid"])] = own
        out.entries.append(_entry("compaction", own, nearest_kept(boundary.get("logicalParentUuid")),
                                  str(boundary.get("timestamp") or ""), **boundary_fields(boundary, own)))
        parent = own
    for group in active:
        if group[0] in summaries:
            continue
        own = new_id()
        for uuid in group:
            out.ids[uuid] = own
        fields = _claude_fields(session, group)
        out.model = fields.get("model", out.model)
        out.entries.append(_entry("message", own, parent, str(session.by_uuid[group[0]].get("timestamp") or ""),
                                  **fields))
        parent = own
    return out


def _summary_of(session: ClaudeSession, boundary: dict[str, Any]) -> dict[str, Any] | None:
    """The compact summary written for `boundary`: the first `isCompactSummary` entry whose
    parents lead up to it through entries that are no messages (a reactive compaction writes
    attachments between the boundary and its summary)."""
    own = boundary.get("uuid")
    for entry in session.by_uuid.values():
        if not entry.get("isCompactSummary"):
            continue
        parent, seen = entry.get("parentUuid"), set()
        while isinstance(parent, str) and parent not in seen:
            if parent == own:
                return entry
            seen.add(parent)
            above = session.by_uuid.get(parent)
            if above is None or above.get("type") in ("user", "assistant") \
                    or above.get("subtype") == "compact_boundary":
                break
            parent = above.get("parentUuid")
    return None


def _active_chain_boundary(session: ClaudeSession) -> list[str]:
    """The compact boundary that starts the active path, if any (it is not a context message)."""
    if not session.context_ids:
        return []
    from .claude_chain import build_chain

    chain = build_chain(session.leaf_id or session.context_ids[-1], session.by_uuid, [])
    first = session.by_uuid.get(chain[0]) if chain else None
    return [chain[0]] if first and first.get("subtype") == "compact_boundary" else []
