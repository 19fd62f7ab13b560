#!/usr/bin/env python3
"""Appending to a session, side by side with its floors, in one run.

    .venv/bin/python benches/bench_append.py --work /tmp/ccappend [--entries 50000] [--json OUT]

Put `--work` on the disk you care about: every commit is fsynced, so the disk's flush latency is
most of the figure. Each row appends the same entries (a realistic turn of 10: a prompt, four
assistant steps with tool calls, four tool results of 0.2-4 KB, a closing reply) in per-turn
commits of 10 entries, and reports entries/s and the latency of each commit (p50/p99):

1. **commandcode**: `SessionWriter` (ids, timestamps, key order, JSON, one write + fdatasync per
   commit, writer lock held), appending to an existing session as a resumed session does.
2. **floor: write + fdatasync**: the same bytes, pre-encoded, one `os.write` and one
   `os.fdatasync` per commit on an open descriptor: what the disk allows with our durability.
3. **pi's way: write per entry, no fsync** (pi's `appendFileSync` per entry): faster, and loses
   committed turns on power loss; shown for scale only.

The issue's target: 50,000 entries/s with per-turn commits of 10 entries.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import commandcode  # noqa: F401  (installed, or `maturin develop`)
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))

from commandcode.sessions.files import SessionFiles
from commandcode.sessions.reader import open_session
from commandcode.sessions.writer import SessionWriter
from commandcode.storage.jsonfmt import encode_line

TURN = 10
TARGET_ENTRIES_PER_S = 50_000


def turn_messages(rng: random.Random, turn: int) -> list[dict]:
    """Ten messages of a realistic turn (sizes as in the generated benchmark sessions)."""
    def text(size: int) -> str:
        return "".join(rng.choice("abcdefghij klmnop\n\"\\") for _ in range(size))

    messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": f"turn {turn}: " + text(200)}]}]
    for step in range(4):
        call = f"call_{turn}_{step}"
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": text(150)},
            {"type": "tool_use", "id": call, "name": "read_file", "input": {"path": f"src/m{step}.py"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": text(rng.randint(200, 4000))}]})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": text(600)}]})
    return messages


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def row(name: str, entries: int, elapsed: float, commits: list[float], note: str = "") -> dict:
    return {"name": name, "entries": entries, "seconds": round(elapsed, 4),
            "entries_per_s": round(entries / elapsed), "commit_p50_ms": round(percentile(commits, 0.5) * 1e3, 3),
            "commit_p99_ms": round(percentile(commits, 0.99) * 1e3, 3), "note": note}


def bench_commandcode(work: Path, turns: list[list[dict]]) -> dict:
    files = SessionFiles(work / "project", "0a0a0a0a-0000-4000-8000-000000000000")
    with SessionWriter(files, "/bench") as writer:  # a session that exists, as on resume
        writer.append_message(turns[0][0])
        writer.append_message(turns[0][1])
        writer.commit()
    commits: list[float] = []
    start = time.perf_counter()
    with SessionWriter(files, "/bench") as writer:
        for messages in turns:
            for message in messages:
                writer.append_message(message)
            before = time.perf_counter()
            writer.commit()
            commits.append(time.perf_counter() - before)
    elapsed = time.perf_counter() - start
    count = sum(map(len, turns))
    opened = open_session(files.transcript)
    assert opened.entry_count == count + 2 and not opened.skipped_lines, "the appended session must read back whole"
    return row("commandcode SessionWriter (fdatasync per commit)", count, elapsed, commits)


def encoded_turns(turns: list[list[dict]]) -> list[bytes]:
    payloads = []
    parent = None
    for number, messages in enumerate(turns):
        lines = []
        for position, message in enumerate(messages):
            entry_id = f"{number:04x}{position:04x}"
            lines.append(encode_line({"type": "message", "id": entry_id, "parentId": parent,
                                      "timestamp": "2026-11-29T00:00:00.000Z", "message": message}))
            parent = entry_id
        payloads.append(b"".join(lines))
    return payloads


def bench_floor(work: Path, payloads: list[bytes], count: int) -> dict:
    path = work / "floor.jsonl"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    commits: list[float] = []
    start = time.perf_counter()
    try:
        for payload in payloads:
            before = time.perf_counter()
            os.write(descriptor, payload)
            os.fdatasync(descriptor)
            commits.append(time.perf_counter() - before)
    finally:
        os.close(descriptor)
    return row("floor: one write + fdatasync per commit (pre-encoded)", count, time.perf_counter() - start, commits)


def bench_no_fsync(work: Path, payloads: list[bytes], count: int) -> dict:
    path = work / "nosync.jsonl"
    commits: list[float] = []
    start = time.perf_counter()
    for payload in payloads:
        before = time.perf_counter()
        for line in payload.splitlines(keepends=True):  # one append call per entry, no fsync
            with open(path, "ab") as handle:
                handle.write(line)
        commits.append(time.perf_counter() - before)
    return row("pi's way: open+append per entry, no fsync", count, time.perf_counter() - start, commits,
               "not durable: a power loss drops committed turns")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder on the disk to measure")
    parser.add_argument("--entries", type=int, default=50_000, help="entries per row (a multiple of 10)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    work = args.work / "bench-append"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.environ["COMMANDCODE_HOME"] = str(work / "home")
    rng = random.Random(7)
    turns = [turn_messages(rng, number) for number in range(max(1, args.entries // TURN))]
    payloads = encoded_turns(turns)
    count = sum(map(len, turns))
    rows = [bench_commandcode(work, turns), bench_floor(work, payloads, count), bench_no_fsync(work, payloads, count)]
    print(f"Appending {count:,} entries in commits of {TURN} ({sum(map(len, payloads)) / 1e6:.1f} MB) to {work}")
    print(f"| what | entries/s | commit p50 ms | commit p99 ms | × target ({TARGET_ENTRIES_PER_S:,}/s) |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['name']} | {r['entries_per_s']:,} | {r['commit_p50_ms']:.3f} | {r['commit_p99_ms']:.3f} | "
              f"{r['entries_per_s'] / TARGET_ENTRIES_PER_S:.2f} |")
    if args.json:
        args.json.write_text(json.dumps({"entries": count, "turn": TURN, "rows": rows}, indent=2) + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
