#!/usr/bin/env python3
"""Sub-agent runs against a stub OpenAI-compatible server on 127.0.0.1 (issue #28's targets).

Real `python -m commandcode --yolo -p` processes, fresh project each run (the first run of a lane
also a fresh data dir: first contact), the model a stub answering by script with `--latency` ms
before each reply. The stub keeps when each request arrived and when each reply was sent, per
agent (the parent, or a run named by its prompt), so every figure is a gap seen on the wire:

- **first request**: a parent's reply holding one `agent` call is sent at t0; the run's first
  request arrives at t1. `t1 - t0` is what starting a foreground sub-agent costs (the stub's own
  latency is before t0). Baseline: the parent's own step, from its reply holding a `write_file`
  call to its next request (the tool's run and the next request), in the same process.
- **parallel**: one step of 1 and of 4 `agent` calls, each run writing `--files` files (one
  `write_file` per model step); the time from the parent's reply to its next request (all runs
  done). Target: 4 runs within 1.2x one run's time.
- **backup per file** (in-process, the same call path the tools take): `CheckpointManager.editing`
  around each write, by 1 writer (the parent) and by 4 at once (parallel runs).
- **per-file step on the wire**: the gap between a reply holding one `write_file` and that agent's next
  request (the backup into the checkpoint, the write, the after-digest, the next request), for
  the parent writing `--files` files itself, one run, and 4 parallel runs. Target: a run's no
  more than the parent's.

    python benches/bench_subagents.py [--rounds 5] [--files 50] [--latency 50] [--json OUT]
    PYTHONPATH=TREE python benches/bench_subagents.py --backup-only 1   # the parent's path, any tree

Medians with min–max spreads over the rounds; the lanes alternate round by round, so a loaded
machine slows them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.openai_stub import OpenAIStub, Reply, text, tool_calls, write_providers

SCRIPT = re.compile(r"^bench (parent|spawn|sub) (\S+) (\d+) (\d+)")
CONTENT = "".join(f"line {number} of a file a sub-agent writes\n" for number in range(50))


class ScriptedStub(OpenAIStub):
    """Answers by the first user message's script line (`bench MODE NAME RUNS FILES`) and the
    count of tool results so far; sleeps `latency` before each reply; keeps wire times."""

    def __init__(self, latency: float) -> None:
        super().__init__()
        self.latency = latency
        self.events: list[tuple[str, str, int, float]] = []  # (kind: in/out, agent, step, perf_counter)
        self._local = threading.local()

    def default_reply(self, body: Any) -> Reply:  # type: ignore[override]
        moment = time.perf_counter()
        messages = body.get("messages", []) if isinstance(body, dict) else []
        first = next((_text(message.get("content")) for message in messages if message.get("role") == "user"), "")
        match = SCRIPT.search(first)
        step = sum(1 for message in messages if message.get("role") == "tool")
        if match is None:
            self._local.key = ("?", step)
            return text("no script")
        mode, name, runs, files = match.group(1), match.group(2), int(match.group(3)), int(match.group(4))
        self.events.append(("in", name, step, moment))
        self._local.key = (name, step)
        if mode == "spawn":
            if step == 0:
                return tool_calls(*((f"call_{name}_{index}", "agent", {
                    "description": f"run {index}", "subagent_type": "general",
                    "prompt": f"bench sub {name}-r{index} 0 {files}"}) for index in range(runs)))
            return text("all runs done")
        if step < files:
            return tool_calls((f"call_{name}_{step}", "write_file", {"file_path": f"{name}/f{step}.txt",
                                                                    "content": CONTENT}))
        return text("finished")

    def serve(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        time.sleep(self.latency)
        super().serve(handler, reply)
        name, step = getattr(self._local, "key", ("?", 0))
        self.events.append(("out", name, step, time.perf_counter()))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return ""


def run(stub: ScriptedStub, home: Path, prompt: str) -> None:
    project = Path(tempfile.mkdtemp(prefix="bench-subagents-project-"))
    try:
        env = {**os.environ, "COMMANDCODE_HOME": str(home), "COMMANDCODE_INDEX": "off", "NO_COLOR": "1"}
        completed = subprocess.run([sys.executable, "-m", "commandcode", "--model", "local/stub-model", "--yolo",
                                    "-p", prompt], cwd=project, env=env, capture_output=True, text=True, timeout=600)
        if completed.returncode != 0:
            raise SystemExit(f"commandcode failed: {completed.stderr[-2000:]}")
    finally:
        shutil.rmtree(project, ignore_errors=True)


def _times(stub: ScriptedStub, name: str) -> tuple[dict[int, float], dict[int, float]]:
    arrived = {step: moment for kind, agent, step, moment in stub.events if kind == "in" and agent == name}
    sent = {step: moment for kind, agent, step, moment in stub.events if kind == "out" and agent == name}
    return arrived, sent


def step_gaps(stub: ScriptedStub, name: str) -> list[float]:
    """ms from each reply holding a tool call to that agent's next request."""
    arrived, sent = _times(stub, name)
    return [(arrived[step + 1] - sent[step]) * 1000 for step in sorted(sent) if step + 1 in arrived]


def first_request(stub: ScriptedStub, parent: str, runs: list[str]) -> float:
    """ms from the parent's reply holding the `agent` calls to the last run's first request."""
    _, sent = _times(stub, parent)
    return max(_times(stub, name)[0][0] - sent[0] for name in runs) * 1000


def wall(stub: ScriptedStub, parent: str) -> float:
    """ms from the parent's reply holding the `agent` calls to its next request (every run done)."""
    arrived, sent = _times(stub, parent)
    return (min(moment for step, moment in arrived.items() if step) - sent[0]) * 1000


def backup_costs(base: Path, threads: int, files: int) -> list[float]:
    """ms per file of the edit tools' checkpoint path (`CheckpointManager.editing`: the backup
    into the open checkpoint, the write, the after-digest), `threads` writers at once (the
    parent alone: 1; parallel sub-agents: 4), each writing `files` files that exist."""
    os.environ["COMMANDCODE_HOME"] = str(base / "home")
    from commandcode.agent.tools import run_tool
    from commandcode.checkpoints.manager import CheckpointManager
    from commandcode.config.paths import project_dir
    from commandcode.sessions.files import SessionFiles

    project = base / "project"
    for thread in range(threads):
        for number in range(files):
            path = project / f"t{thread}" / f"f{number}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"before {number}\n" * 40)
    manager = CheckpointManager.for_session(SessionFiles(project_dir(project), f"bench-{threads}"), project)
    manager.open_checkpoint("bench", 0, None)
    costs: list[float] = []
    start = threading.Barrier(threads)

    def writer(thread: int) -> None:
        start.wait()
        for number in range(files):
            path = str(project / f"t{thread}" / f"f{number}.txt")
            began = time.perf_counter()
            if hasattr(manager, "editing"):
                with manager.editing(path):
                    run_tool("write_file", {"file_path": path, "content": CONTENT}, project)
                    manager.record_after_edit(path)
            else:  # a tree from before the sub-agents (`--backup-only` on main's code): the same calls, unlocked
                manager.backup_before_edit(path)
                run_tool("write_file", {"file_path": path, "content": CONTENT}, project)
                manager.record_after_edit(path)
            costs.append((time.perf_counter() - began) * 1000)

    workers = [threading.Thread(target=writer, args=(thread,)) for thread in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    manager.close()
    return costs


def spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 2), "min": round(min(values), 2), "max": round(max(values), 2),
            "n": len(values)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--latency", type=float, default=50.0, help="the stub's ms before each reply")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--backup-only", type=int, default=0, metavar="THREADS",
                        help="only the in-process backup lane with THREADS writers: median ms per file (to "
                             "compare source trees through PYTHONPATH)")
    options = parser.parse_args()
    if options.backup_only:
        folder = Path(tempfile.mkdtemp(prefix="bench-subagents-api-"))
        try:
            costs = backup_costs(folder, options.backup_only, options.files)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        print(json.dumps(spread(costs)))
        return 0
    results: dict[str, list[float]] = {name: [] for name in (
        "first_request_ms", "first_request_first_contact_ms", "parent_step_ms", "wall_1_run_ms", "wall_4_runs_ms",
        "ratio_4_to_1", "per_file_parent_ms", "per_file_1_run_ms", "per_file_4_runs_ms",
        "backup_per_file_1_thread_ms", "backup_per_file_4_threads_ms")}
    base = Path(tempfile.mkdtemp(prefix="bench-subagents-"))
    try:
        with ScriptedStub(options.latency / 1000) as stub:
            for round_number in range(options.rounds):
                home = base / f"home{round_number}"
                write_providers(home, stub.url, api_key=False)
                tag = f"r{round_number}"
                run(stub, home, f"bench spawn {tag}-fr 1 0")  # a fresh data dir: first contact
                key = "first_request_first_contact_ms" if round_number == 0 else "first_request_ms"
                results[key].append(first_request(stub, f"{tag}-fr", [f"{tag}-fr-r0"]))
                run(stub, home, f"bench parent {tag}-p 0 {options.files}")
                gaps = step_gaps(stub, f"{tag}-p")
                results["parent_step_ms"].append(statistics.median(gaps))
                results["per_file_parent_ms"].extend(gaps)
                run(stub, home, f"bench spawn {tag}-one 1 {options.files}")
                results["wall_1_run_ms"].append(wall(stub, f"{tag}-one"))
                results["per_file_1_run_ms"].extend(step_gaps(stub, f"{tag}-one-r0"))
                run(stub, home, f"bench spawn {tag}-four 4 {options.files}")
                results["wall_4_runs_ms"].append(wall(stub, f"{tag}-four"))
                for index in range(4):
                    results["per_file_4_runs_ms"].extend(step_gaps(stub, f"{tag}-four-r{index}"))
                results["ratio_4_to_1"].append(results["wall_4_runs_ms"][-1] / results["wall_1_run_ms"][-1])
                for threads in (1, 4):
                    results[f"backup_per_file_{threads}_thread{'s' if threads > 1 else ''}_ms"].extend(
                        backup_costs(base / f"api{round_number}-{threads}", threads, options.files))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report = {"files": options.files, "latency_ms": options.latency, "rounds": options.rounds,
              "load": os.getloadavg(), "cpus": os.cpu_count(),
              **{name: spread(values) for name, values in results.items() if values}}
    text_report = json.dumps(report, indent=2)
    print(text_report)
    if options.json is not None:
        options.json.write_text(text_report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
