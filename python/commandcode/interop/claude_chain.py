"""The conversation Claude Code rebuilds from a transcript: the leaf and the chain up to it.

Rules (from the files Claude Code 2.1.332 writes; see docs/format.md §13):
- The leaf is the last `last-prompt` entry's `leafUuid` when it names an entry; an all-zero
  `leafUuid` (what a rewind to before the first prompt writes, with `explicit: true`) means an
  empty conversation; otherwise the last non-sidechain conversation entry in the file.
- The chain is the `parentUuid` walk from the leaf, stopping at a cycle. A `compact_boundary`
  (its `parentUuid` is null, `logicalParentUuid` points across) starts the context; when its
  `compactMetadata.preservedSegment` names `headUuid..tailUuid`, that kept segment is relinked
  between the `anchorUuid` (the summary) and the summary's next entry, as Claude Code does.
- Parallel tool calls are separate assistant entries sharing one `message.id`; each result hangs
  under its own call and the next reply under one of them, so a plain walk misses the other
  calls or results: every assistant entry of a group, then every result of the group's
  `tool_use` ids, is put back where the group stands (file order).
"""

from __future__ import annotations

from typing import Any

ZERO_UUID = "00000000-0000-0000-0000-000000000000"
CONVERSATION_TYPES = frozenset({"user", "assistant", "system", "attachment"})


def find_leaf(entries: list[dict[str, Any]], by_uuid: dict[str, dict[str, Any]],
              warnings: list[str], *, sidechain: bool = False) -> tuple[str | None, bool]:
    """(leaf uuid, whether the leaf was rewound to before the first prompt); `sidechain`: the
    file is a subagent's, whose entries are all sidechain entries."""
    pointer = None
    for entry in entries:
        if entry.get("type") == "last-prompt" and "leafUuid" in entry:
            pointer = entry
    if pointer is not None:
        leaf = pointer.get("leafUuid")
        if leaf == ZERO_UUID:
            return None, True
        if isinstance(leaf, str) and leaf in by_uuid:
            return leaf, False
        if isinstance(leaf, str):
            warnings.append(f"the recorded leaf {leaf} is not in the file; the last message is the leaf")
    for entry in reversed(entries):
        if entry.get("type") in CONVERSATION_TYPES and isinstance(entry.get("uuid"), str) \
                and (sidechain or not entry.get("isSidechain")):
            return str(entry["uuid"]), False
    return None, False


def _walk_up(start: str, by_uuid: dict[str, dict[str, Any]], stop: set[str], warnings: list[str]) -> list[str]:
    """uuids from `start` up its `parentUuid` links (leaf first), not past a boundary."""
    chain: list[str] = []
    seen: set[str] = set()
    current: str | None = start
    while current is not None and current in by_uuid:
        if current in seen:
            warnings.append(f"a parent cycle at {current}; the walk stopped there")
            break
        seen.add(current)
        chain.append(current)
        entry = by_uuid[current]
        if current in stop or (entry.get("type") == "system" and entry.get("subtype") == "compact_boundary"):
            break
        parent = entry.get("parentUuid")
        if isinstance(parent, str) and parent not in by_uuid:
            warnings.append(f"entry {current} names a parent {parent} that is not in the file")
        current = parent if isinstance(parent, str) else None
    return chain


def build_chain(leaf: str, by_uuid: dict[str, dict[str, Any]], warnings: list[str]) -> list[str]:
    """The uuids of the conversation at `leaf`, root first (see the module docstring)."""
    chain = list(reversed(_walk_up(leaf, by_uuid, set(), warnings)))
    if not chain:
        return chain
    boundary = by_uuid[chain[0]]
    segment = (boundary.get("compactMetadata") or {}).get("preservedSegment") \
        if boundary.get("subtype") == "compact_boundary" else None
    if isinstance(segment, dict) and all(isinstance(segment.get(key), str) for key in ("headUuid", "anchorUuid",
                                                                                        "tailUuid")):
        head, anchor, tail = segment["headUuid"], segment["anchorUuid"], segment["tailUuid"]
        if anchor in chain and tail in by_uuid and head in by_uuid:
            kept = list(reversed(_walk_up(tail, by_uuid, {head}, warnings)))
            if kept and kept[0] == head:
                position = chain.index(anchor) + 1
                chain[position:position] = [uuid for uuid in kept if uuid not in chain]
            else:
                warnings.append("the compaction's preserved segment is not a chain in the file; it was left out")
    return chain


def regroup_parallel_calls(chain: list[str], entries: list[dict[str, Any]],
                           by_uuid: dict[str, dict[str, Any]], *, sidechain: bool = False) -> list[str]:
    """The chain with every call and result of a parallel tool-call group put back."""
    groups: dict[str, list[str]] = {}
    results: dict[str, list[str]] = {}
    for entry in entries:
        uuid = entry.get("uuid")
        if not isinstance(uuid, str) or (entry.get("isSidechain") and not sidechain):
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if entry.get("type") == "assistant" and isinstance(message.get("id"), str):
            groups.setdefault(message["id"], []).append(uuid)
        elif entry.get("type") == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results.setdefault(str(block.get("tool_use_id")), []).append(uuid)
    out: list[str] = []
    placed: set[str] = set()
    for uuid in chain:
        if uuid in placed:
            continue
        message = by_uuid[uuid].get("message")
        group_id = message.get("id") if isinstance(message, dict) and by_uuid[uuid].get("type") == "assistant" else None
        if not isinstance(group_id, str) or len(groups.get(group_id, [])) < 2:
            out.append(uuid)
            placed.add(uuid)
            continue
        members = [member for member in groups[group_id] if member not in placed]
        call_ids = [block.get("id") for member in members
                    for block in (by_uuid[member]["message"].get("content") or [])
                    if isinstance(block, dict) and block.get("type") == "tool_use"]
        answers = [answer for call in call_ids for answer in results.get(str(call), []) if answer not in placed]
        for item in [*members, *sorted(set(answers), key=answers.index)]:
            if item not in placed:
                out.append(item)
                placed.add(item)
    return out
