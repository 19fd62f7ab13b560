"""The team share service's two targets (issue #29), on a PostgreSQL cluster of its own:

1. `fanout`: commit to every viewer's stream — three replicas on one database, 300 event-stream
   viewers spread over them, the publisher's background thread in this process; each commit
   appends a turn to the transcript, and the latency is from that append to the row's arrival
   at each viewer (p50, p99, max over every viewer and turn). Target: p99 <= 200 ms.
2. `turn`: a turn's own latency (`AgentSession.run_turn` on the offline model) with sharing off,
   and shared on a service that is up, slow (a proxy that waits 1 s per request) or down.
   Target: unchanged within noise.

    python benches/bench_share_service.py [--viewers 300] [--turns 40] [--json out.json]

Needs Debian's PostgreSQL server (`/usr/lib/postgresql/*/bin`) and psycopg (`.[share-service]`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
if not os.environ.get("COMMANDCODE_BENCH_INSTALLED"):
    sys.path.insert(0, str(ROOT / "python"))


def _quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"n": len(ordered), "p50_ms": round(statistics.median(ordered), 1),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 1),
            "max_ms": round(ordered[-1], 1)}


VIEWER_PROCESSES = 3


def viewer_process(ports: str, events: str, group: int, count: int) -> None:
    """Runs `count` viewers (the bench's clients, out of its process); says `connected`, reads the
    last seq on stdin, prints each viewer's arrival times (CLOCK_MONOTONIC, shared by processes)."""
    from helpers.sse import Viewer

    followers = [Viewer([int(port) for port in ports.split(",")], events, first=group + index * VIEWER_PROCESSES)
                 for index in range(count)]
    for viewer in followers:
        viewer.start()
    for viewer in followers:
        viewer.connected.wait(120)
    print("connected", flush=True)
    target = int(sys.stdin.readline())
    for viewer in followers:
        viewer.target = target
    deadline = time.monotonic() + 60
    while not all(viewer.finished() for viewer in followers) and time.monotonic() < deadline:
        time.sleep(0.05)
    print(json.dumps([viewer.arrived for viewer in followers]), flush=True)
    os._exit(0)


def fanout(url: str, home: Path, work: Path, viewers: int, turns: int) -> dict[str, Any]:
    from commandcode.sessions.files import SessionFiles
    from commandcode.sharing import client, publisher
    from commandcode.sharing.outbox import Outbox
    from helpers.postgres import Replica, token
    from helpers.transcripts import TranscriptBuilder

    os.environ["CC_SHARE_TOKEN"] = token(url, home, work, "bench")
    running = [Replica(url, home, work) for _ in range(3)]
    try:
        (home / "settings.json").write_text(json.dumps({"share": {"server": running[0].url, "token": "$CC_SHARE_TOKEN"}}))
        builder = TranscriptBuilder(work)
        builder.user("the first prompt")
        builder.assistant("the first reply")
        transcript = builder.write(home)
        files = SessionFiles.for_transcript(transcript)
        link = client.publish(files, follow=True)
        share_id = json.loads(files.share.read_text())["shareId"]
        events = link.removeprefix(running[0].url).replace("?", "/events?")
        ports = ",".join(str(replica.port) for replica in running)
        groups = [subprocess.Popen([sys.executable, __file__, "--viewer-process", ports, events, str(group),
                                    str(viewers // VIEWER_PROCESSES)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   text=True) for group in range(VIEWER_PROCESSES)]
        for group in groups:
            assert group.stdout is not None and group.stdout.readline().strip() == "connected"
        committed: dict[str, float] = {}
        written = len(builder.text())
        for turn in range(turns):
            builder.user(f"prompt {turn}")
            builder.assistant(f"reply-marker-{turn}.")
            text = builder.text()
            with open(transcript, "a", encoding="utf-8") as handle:
                handle.write(text[written:])
            committed[f"reply-marker-{turn}."] = time.monotonic()
            written = len(text)
            time.sleep(0.25)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (Outbox(share_id).sent < Outbox(share_id).last()
                                               or Outbox(share_id).last() < 2 * turns + 2):
            time.sleep(0.05)
        publisher.unfollow(files.session_id)
        entries = Outbox(share_id).entries
        arrivals: list[dict[int, float]] = []
        for group in groups:
            output, _ = group.communicate(f"{len(entries)}\n", timeout=120)
            arrivals.extend({int(seq): at for seq, at in viewer.items()} for viewer in json.loads(output))
        seq_of = {marker: next(entry["seq"] for entry in entries if marker in entry["html"]) for marker in committed}
        latencies = [(arrived[seq_of[marker]] - at) * 1000 for arrived in arrivals
                     for marker, at in committed.items() if seq_of[marker] in arrived]
        missing = viewers * turns - len(latencies)
        per_turn = [round(statistics.median([(arrived[seq_of[marker]] - at) * 1000 for arrived in arrivals
                                             if seq_of[marker] in arrived]), 1) for marker, at in committed.items()]
        return {"replicas": 3, "viewers": viewers, "turns": turns, "missing": missing, **_quantiles(latencies),
                "target_p99_ms": 200, "per_turn_median_ms": per_turn}
    finally:
        for replica in running:
            replica.stop()


def turn_latency(url: str, home: Path, work: Path, turns: int) -> dict[str, Any]:
    from commandcode.agent.runtime import AgentSession
    from commandcode.sharing import client, publisher
    from helpers.postgres import Replica, token
    from helpers.slow_proxy import SlowProxy

    os.environ["CC_SHARE_TOKEN"] = token(url, home, work, "turns")
    replica = Replica(url, home, work)
    proxy = SlowProxy(replica.url, 1.0)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    settings = home / "settings.json"
    results: dict[str, Any] = {}
    os.chdir(work)
    try:
        for mode in ("off", "up", "slow", "down", "off-again"):
            server = {"up": replica.url, "down": replica.url, "slow": proxy.url}
            if mode in server:
                settings.write_text(json.dumps({"share": {"server": server[mode], "token": "$CC_SHARE_TOKEN"}}))
            else:
                settings.unlink(missing_ok=True)
            with AgentSession.start(work, permission_mode="bypassPermissions") as agent:
                for warm in range(3):
                    agent.turns.run_turn(f"warm up {warm}")
                if mode in server:
                    client.publish(agent.files, follow=True)
                if mode == "down":
                    replica.stop()
                times = []
                for turn in range(turns):
                    start = time.perf_counter()
                    agent.turns.run_turn(f"turn {turn} of {mode}: " + "words " * 50)
                    times.append((time.perf_counter() - start) * 1000)
                publisher.unfollow(agent.session_id)
            results[mode] = _quantiles(times)
            if mode == "down":
                replica = Replica(url, home, work)
                proxy.target = replica.url
        return results
    finally:
        proxy.shutdown()
        replica.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--viewers", type=int, default=300)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--only", choices=("fanout", "turn"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--viewer-process", nargs=4, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.viewer_process:
        ports, events, group, count = options.viewer_process
        viewer_process(ports, events, int(group), int(count))
        return
    from helpers.postgres import cluster

    report: dict[str, Any] = {}
    with cluster() as postgres, tempfile.TemporaryDirectory(prefix="share-bench-") as folder:
        home, work = Path(folder) / "home" / ".commandcode", Path(folder) / "work"
        home.mkdir(parents=True)
        work.mkdir()
        subprocess.run(["git", "init", "-q", str(work)], check=True)
        os.environ.update({"COMMANDCODE_HOME": str(home), "COMMANDCODE_INDEX": "off"})
        if options.only in (None, "fanout"):
            report["fanout"] = fanout(postgres.url, home, work, options.viewers, options.turns)
            print(json.dumps({"fanout": report["fanout"]}), flush=True)
        if options.only in (None, "turn"):
            report["turn"] = turn_latency(postgres.url, home, work, options.turns)
            print(json.dumps({"turn": report["turn"]}), flush=True)
    if options.json:
        options.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
