#!/usr/bin/env python3
"""`commandcode sessions context FILE --stats --json` on a first contact, side by side with a
baseline: the command whose counts need the whole transcript, opened with no index sidecar yet.

    .venv/bin/python benches/bench_stats_first_contact.py \
        --transcript /work/opendata/1000000000-seed1/414c3404-09f1-4347-8386-bbc4cd613e30.jsonl \
        --runs 5 --baseline /work/wt/lead8/.venv/bin/python

Every run is a first contact: it gets a data dir (`COMMANDCODE_HOME`) of its own under `--work`,
made empty just before and removed after, so no sidecar of an earlier run is found (the sidecar
lives in the data dir, keyed by the transcript's folder and id; the transcript is only read). The
index is on (a first contact writes the sidecar, as a user's first `--stats` does) or, with
`--index off`, off (the plain whole scan). The transcript is read once first so it sits in the
page cache. The runs alternate between this interpreter and `--baseline`, `--runs` rounds, so
load on the machine hits both alike; each run's wall time is taken around the whole process,
bytecode caching on as a pip install has it. The medians are printed with their ratio to the
baseline. Every run must print the same counts, else the bench stops (a fast wrong answer is
worth nothing).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from commandcode.bench import measure


def environment(home: Path, index: str) -> dict[str, str]:
    """This process's environment for one run: a fresh data dir, the index as asked, bytecode
    caching on."""
    env = {name: value for name, value in os.environ.items()
           if name not in measure.BYTECODE_ENV and name != "COMMANDCODE_INDEX"}
    env["COMMANDCODE_HOME"] = str(home)
    if index == "off":
        env["COMMANDCODE_INDEX"] = "off"
    return env


def run_once(python: str, transcript: Path, work: Path, index: str) -> tuple[float, str]:
    """One first contact: the wall seconds and the JSON line printed."""
    home = Path(tempfile.mkdtemp(prefix="home-", dir=work))
    try:
        argv = [python, "-m", "commandcode", "sessions", "context", str(transcript), "--stats", "--json"]
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=environment(home, index))
        elapsed = time.perf_counter() - start
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(f"{python}: {measure.output_tail(done.stderr.encode())}")
    return elapsed, done.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--transcript", type=Path, required=True, help="the session's .jsonl (only read)")
    ap.add_argument("--runs", type=int, default=5, help="rounds, each one run of each interpreter")
    ap.add_argument("--baseline", required=True, help="the baseline's python (its own commandcode build)")
    ap.add_argument("--python", default=sys.executable, help="the python under test (default: this one)")
    ap.add_argument("--index", choices=("on", "off"), default="on", help="COMMANDCODE_INDEX for every run")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()),
                    help="where the runs' fresh data dirs are made (default: the temp dir)")
    a = ap.parse_args()
    if not a.transcript.is_file():
        raise SystemExit(f"error: no transcript at {a.transcript}")
    a.work.mkdir(parents=True, exist_ok=True)
    with a.transcript.open("rb") as handle:  # into the page cache
        while handle.read(1 << 24):
            pass
    pythons = {"after": a.python, "before": a.baseline}
    times: dict[str, list[float]] = {name: [] for name in pythons}
    printed: set[str] = set()
    for python in pythons.values():  # a warm-up each (bytecode caches, the interpreter's files)
        printed.add(run_once(python, a.transcript, a.work, a.index)[1])
    for round_number in range(a.runs):
        order = list(pythons.items()) if round_number % 2 == 0 else list(reversed(pythons.items()))
        for name, python in order:
            elapsed, line = run_once(python, a.transcript, a.work, a.index)
            times[name].append(elapsed)
            printed.add(line)
            print(f"round {round_number + 1} {name}: {elapsed * 1e3:.0f} ms", flush=True)
    if len(printed) != 1:
        raise SystemExit("error: the runs printed different counts:\n" + "\n".join(sorted(printed)))
    before, after = statistics.median(times["before"]), statistics.median(times["after"])
    print(f"printed: {printed.pop()}")
    print(f"index {a.index}, {a.runs} rounds: before {before * 1e3:.0f} ms, after {after * 1e3:.0f} ms "
          f"(medians), after/before {after / before:.3f}")


if __name__ == "__main__":
    main()
