#!/usr/bin/env python3
"""The library's warm open counted in instructions (callgrind), side by side with a baseline.

    .venv/bin/python benches/callgrind_open.py --size 100MB --baseline /work/main/.venv/bin/python
    .venv/bin/python benches/callgrind_open.py --window --transcript FILE.jsonl --work DIR \
        --baseline /work/main/.venv/bin/python

Wall figures of a few milliseconds drown in the load of a shared machine; instruction counts do
not. For each interpreter (this one, then `--baseline`, alternating `--runs` times) it primes the
index sidecar of the session (`--transcript`, else the one `compare_open.py` generates for
`--size` in that script's data folder), with one `COMMANDCODE_HOME` per interpreter under
`--work` (default: beside the session), then counts under `valgrind --tool=callgrind`, with
bytecode caching on as a pip install has it, and prints the median of the runs and the ratio to
the baseline. What it counts:

- by default, the whole library open (`commandcode.bench.measure.LIBRARY_OPEN`:
  `open_session(FILE).context()`) beyond `python -c pass`: the interpreter's exit is in it (the
  modules cleared, the messages freed);
- with `--window`, only what `bench_warm_open.py` times: from before `import commandcode` to
  after `open_session(FILE).context().messages`, run inside `operator.call` so that callgrind
  collects inside that call alone (`--collect-atstart=no --toggle-collect`).

Needs `valgrind` on PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import compare_open
from commandcode.bench import measure

COLLECTED = re.compile(r"Collected : (\d+)")
# The window of bench_warm_open.py, called through `operator.call`: the one C function this
# script calls and nothing before it does, so callgrind can collect inside it alone.
WINDOW = """\
import operator, sys


def window():
    import commandcode

    session = commandcode.open_session(sys.argv[1])
    return session, session.context().messages  # freed after the window, as the bench has it


session, messages = operator.call(window)
print(len(messages))
"""
WINDOW_TOGGLE = ["--collect-atstart=no", "--toggle-collect=*_operator_call*"]


def instructions(argv: list[str], env: dict[str, str], options: tuple[str, ...] = ()) -> int:
    """Instructions callgrind counts for one run of `argv` (all of it, unless `options` say)."""
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", *options, *argv],
                              capture_output=True, text=True, env=env)
    found = COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{argv[0]}: {done.stderr.strip().splitlines()[-1:]}")
    return int(found.group(1))


def environment(home: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if name not in measure.BYTECODE_ENV and name != "COMMANDCODE_INDEX"}
    return {**env, "COMMANDCODE_HOME": str(home)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100MB", help="session size, as compare_open.py takes it")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--transcript", type=Path, help="open this transcript instead of a generated one")
    parser.add_argument("--work", type=Path, help="where the interpreters' data dirs go (default: beside the session)")
    parser.add_argument("--window", action="store_true",
                        help="count only the window bench_warm_open.py times (import to context), not the whole process")
    parser.add_argument("--runs", type=int, default=3, help="alternating runs per interpreter (median)")
    parser.add_argument("--data-dir", type=Path, default=compare_open.REPO / "benches" / ".cache" / "data")
    parser.add_argument("--baseline", metavar="PYTHON", help="the interpreter of the code to compare against")
    args = parser.parse_args()
    path = args.transcript or compare_open.session_for(args.size, args.seed, args.data_dir)[0]
    work = args.work or path.parent
    work.mkdir(parents=True, exist_ok=True)
    pythons = {"this": sys.executable, **({"baseline": args.baseline} if args.baseline else {})}
    envs = {name: environment(work / f"callgrind-home-{name}") for name in pythons}
    open_argv = {name: [python, "-c", WINDOW if args.window else measure.LIBRARY_OPEN, str(path)]
                 for name, python in pythons.items()}
    for name in pythons:  # primes the sidecar and writes the bytecode caches
        for _ in range(2):
            subprocess.run(open_argv[name], env=envs[name], check=True, capture_output=True)
    counts: dict[str, list[int]] = {name: [] for name in pythons}
    for _ in range(args.runs):
        for name, python in pythons.items():
            if args.window:
                counts[name].append(instructions(open_argv[name], envs[name], tuple(WINDOW_TOGGLE)))
            else:
                floor = instructions([python, "-c", "pass"], envs[name])
                counts[name].append(instructions(open_argv[name], envs[name]) - floor)
    medians = {name: statistics.median(runs) for name, runs in counts.items()}
    what = "instructions from `import commandcode` to the context" if args.window else \
        "instructions beyond `python -c pass`"
    print(f"warm library open of {path}, {what}:")
    for name, median in medians.items():
        runs = ", ".join(f"{count / 1e6:.2f}M" for count in counts[name])
        ratio = f"  x{median / medians['baseline']:.3f} of the baseline" if "baseline" in medians else ""
        print(f"  {name:<9} {median / 1e6:6.2f}M  ({runs}){ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
