"""Before/after wall time of whole test files: each file runs alone (one pytest process, no
xdist) in the baseline checkout and in this one, alternately, several rounds, and the report gives
each file's times and the after/before ratio of the medians. This is how the CI-time work measures
a test file it made cheaper on a loaded machine (the whole suite cannot be timed reliably there).

    python benches/compare_test_files.py --before /path/to/main/checkout --rounds 3 FILE...

Each side runs with its own checkout's venv (`.venv/bin/python`, or `--before-python`), from its
own root, with `-p no:xdist -q`. Bytecode is cached (PYTHONDONTWRITEBYTECODE unset) in a per-side
PYTHONPYCACHEPREFIX, as CI's installed package has its .pyc: a CLI process then starts as it does
in CI. A file that fails on either side is reported as failed, not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def run_file(root: Path, python: str, test_file: str, cache: Path) -> tuple[float, bool]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    started = time.perf_counter()
    completed = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:xdist", test_file], cwd=root, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        sys.stderr.write(f"{root}: {test_file} failed:\n{completed.stdout[-3000:]}\n")
    return elapsed, completed.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the baseline checkout")
    parser.add_argument("--before-python", help="its interpreter (default: BEFORE/.venv/bin/python)")
    parser.add_argument("--after-python", default=sys.executable, help="this checkout's interpreter")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    sides = {"before": (args.before.resolve(), args.before_python or str(args.before / ".venv/bin/python")),
             "after": (HERE, args.after_python)}
    caches = {side: Path(tempfile.mkdtemp(prefix=f"pyc-{side}-")) for side in sides}
    times: dict[str, dict[str, list[float]]] = {name: {side: [] for side in sides} for name in args.files}
    failed: set[tuple[str, str]] = set()
    for round_number in range(args.rounds):
        order = ["before", "after"] if round_number % 2 == 0 else ["after", "before"]
        for name in args.files:
            for side in order:
                root, python = sides[side]
                elapsed, ok = run_file(root, python, name, caches[side])
                print(f"round {round_number + 1} {side:6} {elapsed:7.1f} s  {name}{'' if ok else '  FAILED'}", flush=True)
                if ok:
                    times[name][side].append(elapsed)
                else:
                    failed.add((name, side))
    print("\nfile: before median / after median (after/before), seconds, each side's runs")
    report = {}
    for name, by_side in times.items():
        if not by_side["before"] or not by_side["after"]:
            print(f"{name}: not timed (failed: {sorted(side for file, side in failed if file == name)})")
            continue
        before, after = statistics.median(by_side["before"]), statistics.median(by_side["after"])
        print(f"{name}: {before:.1f} / {after:.1f} ({after / before:.2f}x)  before {by_side['before']}  after {by_side['after']}")
        report[name] = {"before": by_side["before"], "after": by_side["after"], "ratio": after / before}
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
