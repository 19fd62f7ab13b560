#!/usr/bin/env python3
"""Baseline: open a Command Code v3 session the naive way, in pure Python.

This script owns the "plain Python" peer of the open benchmarks (benches/compare_open.py):
it reads every line, JSON-parses it, keeps every entry in an id map, takes the last
valid entry as the leaf, walks parentId links to the root, and rebuilds the context of
the leaf by Command Code's rules (format §4.4): the last compaction on the path, the
path entries from its firstKeptEntryId up to it, then everything after it; message,
compaction, branch_summary and custom_message entries become messages.

    python3 benches/py_full_load.py SESSION.jsonl [--json stdlib|orjson]

Prints one JSON line: counts, the leaf, the current model and effort, in-process
timings and the peak RSS. Standalone on purpose: it imports nothing from commandcode.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

ENTRY_TYPES = frozenset(("message", "model_change", "effort_change", "compaction", "branch_summary", "custom",
                         "custom_message", "label", "session_info"))
COMPACTION_PREFIX = ("This is an auto-compacted summary of the earlier conversation that ran out of context.\n\n")
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"


def is_entry(e: object) -> bool:
    return (isinstance(e, dict) and e.get("type") in ENTRY_TYPES and isinstance(e.get("id"), str)
            and (e.get("parentId") is None or isinstance(e.get("parentId"), str))
            and isinstance(e.get("timestamp"), str))


def is_header(e: object) -> bool:
    return (isinstance(e, dict) and e.get("type") == "session" and e.get("version") == 3
            and all(isinstance(e.get(k), str) for k in ("id", "timestamp", "cwd")))


def load(path: str, loads) -> tuple[dict | None, dict[str, dict], dict | None, int]:
    """Parse every line: (header, id -> entry, last valid entry, corrupt line count)."""
    header = None
    by_id: dict[str, dict] = {}
    last = None
    corrupt = 0
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                e = loads(line)
            except ValueError:
                corrupt += 1
                continue
            if header is None:
                if is_header(e):
                    header = e
                else:
                    corrupt += 1
                continue
            if not is_entry(e):
                corrupt += 1
                continue
            by_id[e["id"]] = e
            last = e
    return header, by_id, last, corrupt


def active_path(by_id: dict[str, dict], leaf: dict | None) -> list[dict]:
    """Root..leaf, following parentId; a cycle or an unknown parent ends the walk."""
    path = []
    seen = set()
    cur = leaf
    while cur is not None and cur["id"] not in seen:
        seen.add(cur["id"])
        path.append(cur)
        parent = cur.get("parentId")
        cur = by_id.get(parent) if parent else None
    path.reverse()
    return path


def to_message(e: dict) -> dict | None:
    t = e["type"]
    if t == "message":
        return e["message"]
    if t == "compaction":
        return {"role": "user", "content": [{"type": "text", "text": COMPACTION_PREFIX + e["summary"]}],
                "meta": {"isSummary": True, "summaryEntryId": e["id"]}}
    if t == "branch_summary":
        return {"role": "user", "content": [{"type": "text", "text": BRANCH_PREFIX + e["summary"] + "</summary>"}],
                "meta": {"isMeta": False, "isSummary": True, "source": "branch-summary", "summaryEntryId": e["id"]}}
    if t == "custom_message":
        content = e["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        return {"role": "user", "content": content,
                "meta": {"isMeta": not e.get("display"), "source": "mod:" + e["customType"]}}
    return None


def strip_thinking(e: dict) -> dict:
    m = e.get("message") if e["type"] == "message" else None
    if not m or m.get("role") != "assistant":
        return e
    return {**e, "message": {**m, "content": [b for b in m["content"] if b.get("type") != "thinking"]}}


def context(path: list[dict]) -> tuple[list[dict], str | None, str | None]:
    """Messages of the leaf's context, the current model and the current effort."""
    model = effort = None
    last_compaction = -1
    for i, e in enumerate(path):
        t = e["type"]
        if t == "model_change":
            model = e.get("model")
        elif t == "effort_change":
            effort = e.get("effort")
        elif t == "message" and e.get("model"):
            model = e["model"]
        elif t == "compaction":
            last_compaction = i
    if last_compaction < 0:
        entries = path
    else:
        comp = path[last_compaction]
        start = next((i for i in range(last_compaction) if path[i]["id"] == comp.get("firstKeptEntryId")), None)
        kept = path[start:last_compaction] if start is not None else []
        if comp.get("stripThinkingFromKept"):
            kept = [strip_thinking(e) for e in kept]
        entries = [comp] + kept + path[last_compaction + 1:]
    messages = [m for m in map(to_message, entries) if m is not None]
    return messages, model, effort


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--json", choices=["stdlib", "orjson"], default="stdlib")
    a = ap.parse_args()
    if a.json == "orjson":
        import orjson
        loads = orjson.loads
    else:
        loads = json.loads
    t0 = time.perf_counter()
    header, by_id, leaf, corrupt = load(a.file, loads)
    t1 = time.perf_counter()
    path = active_path(by_id, leaf)
    messages, model, effort = context(path)
    t2 = time.perf_counter()
    print(json.dumps({
        "json": a.json, "session_id": header["id"] if header else None, "entries": len(by_id), "corrupt": corrupt,
        "leaf": leaf["id"] if leaf else None, "active_path_len": len(path), "context_messages": len(messages),
        "model": model, "effort": effort, "parse_s": round(t1 - t0, 4), "context_s": round(t2 - t1, 4),
        "total_s": round(t2 - t0, 4), "maxrss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }))


if __name__ == "__main__":
    main()
