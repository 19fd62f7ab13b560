#!/usr/bin/env python3
"""The library's warm open in process, by phase, side by side with a baseline.

    .venv/bin/python benches/bench_warm_open.py --size 1GB --data-dir /work/opendata --runs 12 \
        --baseline /work/wt/lead7/.venv/bin/python

What issue 30's "library warm open within 3.0 ms in process" measures: inside one fresh
interpreter, the time from before `import commandcode` to after
`commandcode.open_session(path).context()` has built the messages, with the session's index
sidecar primed, in three phases: `import` (`import commandcode`), `open` (`open_session`: the
reader's modules and the sidecar check) and `context` (reading and building the messages). Each
interpreter (this one, then `--baseline`) gets its own `COMMANDCODE_HOME` under `--work`, primed
once (which also writes the bytecode caches, as a pip install has them); then the runs alternate
between the interpreters, `--runs` rounds, and the medians per phase are printed with their
ratio to the baseline, and the median of the page faults in the window (minor faults, from
`getrusage`: a count the machine's load does not change, and each fault a few microseconds of
the window on a shared virtual machine). Every run must load its index from the sidecar and
agree on the number of context messages, else the bench stops (a fast wrong answer is worth
nothing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import compare_open
from commandcode.bench import measure

PHASES = ("import", "open", "context", "total")
# Run by each interpreter: the phases in milliseconds and the window's page faults, then how
# the index was obtained and the number of context messages (checked, not timed).
WARM_OPEN = """\
import resource, sys, time
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
t0 = time.perf_counter()
import commandcode
t1 = time.perf_counter()
session = commandcode.open_session(sys.argv[1])
t2 = time.perf_counter()
messages = session.context().messages
t3 = time.perf_counter()
f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
print((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t3 - t0) * 1e3, f1 - f0, session.index_source, len(messages))
"""


def environment(home: Path) -> dict[str, str]:
    """This process's environment for one interpreter: its own data dir, the index on, and
    bytecode caching as a pip install has it."""
    env = {name: value for name, value in os.environ.items()
           if name not in measure.BYTECODE_ENV and name != "COMMANDCODE_INDEX"}
    return {**env, "COMMANDCODE_HOME": str(home)}


def run_once(python: str, transcript: Path, env: dict[str, str]) -> tuple[list[float], str, int]:
    """The phases in milliseconds and the window's page faults (last), the index source and the
    number of context messages of one run."""
    done = subprocess.run([python, "-c", WARM_OPEN, str(transcript)], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{python}: {measure.output_tail(done.stderr.encode())}")
    *figures, source, count = done.stdout.split()
    return [float(value) for value in figures], source, int(count)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100MB", help="session size, as compare_open.py takes it")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--transcript", type=Path, help="open this transcript instead of a generated one")
    parser.add_argument("--data-dir", type=Path, default=compare_open.REPO / "benches" / ".cache" / "data")
    parser.add_argument("--work", type=Path, help="where the interpreters' data dirs go (default: a temporary dir)")
    parser.add_argument("--runs", type=int, default=12, help="alternating runs per interpreter (median)")
    parser.add_argument("--baseline", metavar="PYTHON", help="the interpreter of the code to compare against")
    args = parser.parse_args()
    transcript = args.transcript or compare_open.session_for(args.size, args.seed, args.data_dir)[0]
    pythons = {"this": sys.executable, **({"baseline": args.baseline} if args.baseline else {})}
    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.work) as work:
        envs = {name: environment(Path(work) / f"home-{name}") for name in pythons}
        counts = set()
        for name, python in pythons.items():  # primes the sidecar and writes the bytecode caches
            for _ in range(2):
                _, source, count = run_once(python, transcript, envs[name])
            counts.add(count)
        figures: dict[str, list[list[float]]] = {name: [] for name in pythons}
        for _ in range(args.runs):
            for name, python in pythons.items():
                values, source, count = run_once(python, transcript, envs[name])
                if source != "loaded" or count not in counts or len(counts) != 1:
                    raise SystemExit(f"{name}: index {source}, {count} messages (expected loaded, {counts})")
                figures[name].append(values)
    medians = {name: [statistics.median(run[phase] for run in runs) for phase in range(len(PHASES))]
               for name, runs in figures.items()}
    faults = {name: statistics.median(run[len(PHASES)] for run in runs) for name, runs in figures.items()}
    print(f"warm library open of {transcript}, in process, median of {args.runs} alternating runs (ms):")
    print(f"  {'':<9} " + " ".join(f"{phase:>9}" for phase in PHASES))
    for name, values in medians.items():
        print(f"  {name:<9} " + " ".join(f"{value:9.3f}" for value in values))
    if "baseline" in medians:
        ratios = [this / before for this, before in zip(medians["this"], medians["baseline"], strict=True)]
        print(f"  {'ratio':<9} " + " ".join(f"{ratio:8.3f}x" for ratio in ratios))
    print("  page faults in the window (median): " + ", ".join(f"{name} {count:.0f}" for name, count in faults.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
