#!/usr/bin/env python3
"""First contact: resolving, resuming, listing and forking sessions no catalog or sidecar has seen yet,
side by side with the engine's own cold open, `cp`, a plain directory scan and today's code, in one run.

    python benches/bench_cold_resume.py [--data /work/bench/cold-data] [--big 1GB] [--sessions 10000]
        [--runs 3] [--baseline /work/baseline/.venv/bin/python] [--baseline-runs 1] [--json OUT]
        [--fork-rounds N] [--forks-only]

Corpora (generated once with `commandcode.bench.generate`, kept under `--data`, shared with
`bench_catalog.py`'s layout): **big**, one session of `--big` bytes; **many**, `--sessions` small ones.

Every timed run starts from nothing: the catalog and the index sidecars are deleted before it
(not timed), the page cache stays warm. Whole processes; wall time, CPU and peak RSS (`/usr/bin/time`).
Rows, each also run with `--baseline`'s interpreter (today's code, a release build) when given:

1. **big**: `sessions context ID` (the engine's cold open, the yardstick), `-c -p hello`,
   `sessions list --json`, `sessions list` with `COMMANDCODE_CATALOG=off` (the folder scan), and
   `sessions fork ID` three times in a row (each a new 1 GB session the next fork's name check
   meets uncatalogued) beside `cp --reflink=auto` of the transcript, and that copy followed by
   `sync FILE` (a fork is fsynced before it answers). Targets: `-c -p` and the list
   within 1.3x the cold context (minus start-up) under 200 MiB; each fork within 1.5x `cp`.
   `--fork-rounds N` makes the three forks N times from nothing and shows medians (the disk is
   shared: one copy's time varies several-fold); `--forks-only` skips the other big rows.
2. **many**: first `sessions list --limit 20 --json`, first `-c -p hello`, the warm list, and the
   plain directory scan (`os.scandir` + `stat` of every transcript). Targets: first list and first
   `-c -p` within 1 s beyond start-up; warm list within 100 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))

from bench_catalog import corpus
from commandcode.bench.generate import parse_size

PLAIN_SCAN = """
import os, sys
rows = []
for entry in os.scandir(sys.argv[1]):
    if entry.name.endswith('.jsonl'):
        rows.append((entry.stat().st_mtime, entry.name))
rows.sort(reverse=True)
print(len(rows))
"""


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "COMMANDCODE_HOME": str(home), "NO_COLOR": "1", "COMMANDCODE_INDEX": "on"}
    env.update(extra)
    return env


def _forget(home: Path) -> None:
    """First contact: no catalog, no index sidecar."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{home}/catalog.sqlite3{suffix}").unlink(missing_ok=True)
    shutil.rmtree(home / "index", ignore_errors=True)


def run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of one process, started through `/usr/bin/time` (a process
    forked from this one would report this one's peak RSS as its own)."""
    report = cwd / ".bench-time"
    began = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-o", str(report), "-f", "%M %U %S", *argv], env=env, cwd=cwd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - began
    fields = report.read_text().split()[-3:]
    report.unlink()
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[-4:])}: exit {done.returncode}: {done.stderr.decode(errors='replace')[-300:]}")
    return wall, float(fields[1]) + float(fields[2]), int(fields[0]) / 1024


def measure(argv: list[str], env: dict[str, str], cwd: Path, runs: int, before: object = None) -> dict[str, float]:
    rows = []
    for _ in range(runs):
        if callable(before):
            before()
        rows.append(run(argv, env, cwd))
    return {"wall_s": round(statistics.median(row[0] for row in rows), 4),
            "cpu_s": round(statistics.median(row[1] for row in rows), 4),
            "peak_rss_mib": round(max(row[2] for row in rows), 1)}


def show(label: str, row: dict[str, float], start: float, yardstick: float | None = None) -> None:
    over = row["wall_s"] - start
    ratio = f"  {over / yardstick:5.2f}x" if yardstick else ""
    print(f"  {label:44} {row['wall_s'] * 1000:9.1f} ms ({over * 1000:9.1f} over start-up){ratio}  "
          f"CPU {row['cpu_s'] * 1000:8.1f} ms  peak {row['peak_rss_mib']:6.1f} MiB", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/bench/cold-data"))
    parser.add_argument("--big", type=parse_size, default=parse_size("1GB"))
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="the python of a venv with today's code (release build)")
    parser.add_argument("--baseline-runs", type=int, default=1)
    parser.add_argument("--skip-big", action="store_true")
    parser.add_argument("--skip-many", action="store_true")
    parser.add_argument("--fork-rounds", type=int, default=1, help="times the three forks are made (medians shown)")
    parser.add_argument("--forks-only", action="store_true", help="big: only the forks (and the cold context)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    interpreters = [("this branch", sys.executable, args.runs)]
    if args.baseline is not None:
        interpreters.append(("baseline", str(args.baseline), args.baseline_runs))
    report: dict[str, dict[str, object]] = {}
    starts = {}
    for label, python, _ in interpreters:
        starts[label] = measure([python, "-c", "pass"], dict(os.environ), Path.cwd(), 5)["wall_s"]
    print(f"interpreter start: {starts['this branch'] * 1000:.1f} ms; load average "
          f"{' '.join(f'{value:.1f}' for value in os.getloadavg())} on {os.cpu_count()} CPUs")

    if not args.skip_big:
        home, cwd = corpus(args.data, "big", 1, args.big, seed=7)
        folder = next((home / "projects").iterdir())
        transcript = max((path for path in folder.glob("*.jsonl") if path.name.count(".") == 1),
                         key=lambda path: path.stat().st_size)
        kept = set(folder.iterdir())
        session_id = transcript.stem
        size = transcript.stat().st_size
        print(f"\nbig: one session of {size / 1e6:.0f} MB, no catalog and no sidecar before each run")
        for label, python, runs in interpreters:
            start = starts[label]
            cli = [python, "-m", "commandcode"]
            reset = lambda: _forget(home)  # noqa: E731
            context = measure([*cli, "sessions", "context", session_id], _env(home), cwd, runs, reset)  # the yardstick
            yardstick = context["wall_s"] - start
            rows = {} if args.forks_only else {
                "sessions context ID (cold open)": context,
                "-c -p hello": measure([*cli, "-c", "-p", "hello"], _env(home), cwd, runs, reset),
                "sessions list --json": measure([*cli, "sessions", "list", "--json"], _env(home), cwd, runs, reset),
                "sessions list, COMMANDCODE_CATALOG=off": measure([*cli, "sessions", "list", "--json"],
                                                                   _env(home, COMMANDCODE_CATALOG="off"), cwd, runs,
                                                                   reset),
            }
            print(f" {label} (ratios: over start-up, to the cold context's)")
            for name, row in rows.items():
                show(name, row, start, yardstick)
            rounds: list[list[dict[str, dict[str, float]]]] = [[], [], []]
            for _ in range(args.fork_rounds):  # each round: three forks in a row from nothing
                _forget(home)
                for number in range(3):
                    copy = folder / f"cp-{number}.tmp"
                    cp = measure(["cp", "--reflink=auto", str(transcript), str(copy)], dict(os.environ), cwd, 1)
                    copy.unlink()
                    # a fork is durable (fsynced) before it answers: the same copy made durable, for reference
                    synced = measure(["sh", "-c", 'cp --reflink=auto "$0" "$1" && sync "$1"', str(transcript),
                                      str(copy)], dict(os.environ), cwd, 1)
                    copy.unlink()
                    forked = measure([*cli, "sessions", "fork", session_id], _env(home), cwd, 1)
                    rounds[number].append({"fork": forked, "cp": cp, "cp_and_sync": synced})
                for path in set(folder.iterdir()) - kept:  # the forks go: the next round starts as this one did
                    if path.is_file():
                        path.unlink()
                shutil.rmtree(home / "file-history", ignore_errors=True)
            forks = []
            for number, taken in enumerate(rounds if args.fork_rounds else []):  # --fork-rounds 0: no forks
                fork_s, cp_s, synced_s = (statistics.median(row[key]["wall_s"] for row in taken)
                                          for key in ("fork", "cp", "cp_and_sync"))
                ratios = sorted((row["fork"]["wall_s"] - start) / row["cp"]["wall_s"] for row in taken)
                forks.append({"fork_wall_s": fork_s, "cp_wall_s": cp_s, "cp_and_sync_wall_s": synced_s, "rounds": taken})
                print(f"  fork {number + 1}: {fork_s * 1000:9.1f} ms ({(fork_s - start) * 1000:9.1f} over start-up), "
                      f"cp --reflink=auto {cp_s * 1000:8.1f} ms: {(fork_s - start) / cp_s:5.2f}x cp "
                      f"(per round: {', '.join(f'{ratio:.2f}' for ratio in ratios)}); cp + sync {synced_s * 1000:8.1f} ms: "
                      f"{(fork_s - start) / synced_s:5.2f}x; peak {max(row['fork']['peak_rss_mib'] for row in taken):.1f} MiB"
                      f" (medians of {len(taken)})", flush=True)
            report[f"big {label}"] = {**rows, "forks": forks, "start_s": start}

    if not args.skip_many:
        home, cwd = corpus(args.data, "many", args.sessions, args.sessions * 4000, seed=1)
        folder = next((home / "projects").iterdir())
        print(f"\nmany: {args.sessions} small sessions, no catalog before each first-contact run")
        for label, python, runs in interpreters:
            start = starts[label]
            cli = [python, "-m", "commandcode"]
            reset = lambda: _forget(home)  # noqa: E731
            listing = [*cli, "sessions", "list", "--limit", "20", "--json"]
            rows = {
                "first sessions list --limit 20 --json": measure(listing, _env(home), cwd, runs, reset),
                "first -c -p hello (--no-session)": measure([*cli, "-c", "-p", "hello", "--no-session"], _env(home), cwd,
                                                            runs, reset),
                "warm sessions list --limit 20 --json": measure(listing, _env(home), cwd, max(runs, 3)),
                "plain directory scan (scandir + stat)": measure([python, "-c", PLAIN_SCAN, str(folder)],
                                                                 dict(os.environ), cwd, max(runs, 3)),
            }
            print(f" {label}")
            for name, row in rows.items():
                show(name, row, start)
            report[f"many {label}"] = {**rows, "start_s": start}
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
