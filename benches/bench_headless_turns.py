#!/usr/bin/env python3
"""Twenty headless turns on the offline model, two source trees interleaved in one run.

Each round runs, for every tree given, one session of `--turns` headless turns in a fresh home and
project (`commandcode -p PROMPT`, then `-c -p PROMPT` for the rest: each turn writes a file, so
the checkpoint hook works too), the trees alternating round by round so a noisy machine slows
both alike. The whole-session wall time is reported per tree (median and min over the rounds)
and as a ratio to the first tree. A tree is a `python/` folder put first on `PYTHONPATH`; both
use this interpreter (and so the same native module when it is copied beside them).

    python benches/bench_headless_turns.py --tree before=/tmp/old/python --tree after=python --rounds 5
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_args import parse_side_by_side


def one_session(tree: Path, turns: int) -> float:
    """Seconds for `turns` headless turns of one new session (fresh home and project)."""
    base = Path(tempfile.mkdtemp(prefix="bench-headless-"))
    try:
        home, project = base / "home", base / "project"
        home.mkdir()
        project.mkdir()
        env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(tree.resolve())}
        started = time.perf_counter()
        for turn in range(turns):
            call = json.dumps({"file_path": f"notes/t{turn}.txt", "content": f"turn {turn}\n"})
            prompt = f"turn {turn}\ncall write_file {call}"
            args = [sys.executable, "-m", "commandcode", *(["-c"] if turn else []), "-p", prompt,
                    "--output-format", "json"]
            done = subprocess.run(args, cwd=project, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"{tree}: turn {turn} failed: {done.stderr.strip()[-400:]}")
        return time.perf_counter() - started
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    options = parse_side_by_side(__doc__, variant="tree", variant_help="a python/ folder", count="turns",
                                 count_default=20)
    trees = [(name, Path(path)) for name, path in options.variants]
    for _name, tree in trees:  # a warm-up each: bytecode compiled, page cache filled
        one_session(tree, 2)
    times: dict[str, list[float]] = {name: [] for name, _ in trees}
    for _round in range(options.rounds):
        for name, tree in trees:
            times[name].append(one_session(tree, options.count))
    first = statistics.median(times[trees[0][0]])
    print(f"{options.count} headless turns (offline model), {options.rounds} rounds interleaved")
    for name, _tree in trees:
        median = statistics.median(times[name])
        print(f"  {name:>8}: median {median:6.2f} s  min {min(times[name]):6.2f} s  ratio {median / first:5.3f}")


if __name__ == "__main__":
    main()
