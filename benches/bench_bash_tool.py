#!/usr/bin/env python3
"""The `bash` tool's cost per command, in process, interpreters interleaved in one run.

Each round runs, under every interpreter given (`--python NAME=PATH`, each with its own
commandcode installed), one child that starts the guard with a first command, then times
`--commands` runs of `run_bash({"command": "true"})`: the wall time of each call (its median and
the 10th/90th percentiles), and the CPU per call of the agent process and of its children (the
shells). The rounds alternate the interpreters, so a noisy machine slows them alike; the figures
are the medians over rounds, with ratios to the first interpreter.

    python benches/bench_bash_tool.py --python before=/work/rel2/.venv/bin/python \\
        --python after=.venv/bin/python --rounds 5 --commands 200
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess

from bench_args import parse_side_by_side

CHILD = r"""
import json, resource, statistics, sys, tempfile, time
from pathlib import Path
from commandcode.agent.bash_tool import run_bash

count = int(sys.argv[1])
cwd = Path(tempfile.mkdtemp(prefix="bench-bash-"))
assert run_bash({"command": "true"}, cwd) == ("(no output)", False)  # the guard starts here
walls = []
before_self, before_children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
for _ in range(count):
    started = time.perf_counter()
    run_bash({"command": "true"}, cwd)
    walls.append(time.perf_counter() - started)
after_self, after_children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = lambda a, b: (a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime) / count
walls.sort()
print(json.dumps({"median": statistics.median(walls), "p10": walls[len(walls) // 10], "p90": walls[len(walls) * 9 // 10],
                  "cpu_self": cpu(after_self, before_self), "cpu_children": cpu(after_children, before_children)}))
"""


def main() -> None:
    options = parse_side_by_side(__doc__, variant="python", variant_help="an interpreter", count="commands",
                                 count_default=200)
    pythons = options.variants
    figures: dict[str, list[dict[str, float]]] = {name: [] for name, _ in pythons}
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    for _round in range(options.rounds):
        for name, python in pythons:
            done = subprocess.run([python, "-c", CHILD, str(options.count)], env=env, capture_output=True,
                                  text=True, check=True)
            figures[name].append(json.loads(done.stdout))
    print(f"load average {' '.join(f'{value:.1f}' for value in os.getloadavg())} on {os.cpu_count()} CPUs; "
          f"{options.rounds} rounds of {options.count} commands (`true`)")
    first = None
    for name, _python in pythons:
        row = {key: statistics.median(sample[key] for sample in figures[name]) for key in figures[name][0]}
        first = first or row
        print(f"{name:>10}: wall {row['median'] * 1000:6.2f} ms (p10 {row['p10'] * 1000:.2f}, p90 {row['p90'] * 1000:.2f};"
              f" {row['median'] / first['median']:.2f}x), CPU agent {row['cpu_self'] * 1000:.2f} ms"
              f" ({row['cpu_self'] / first['cpu_self']:.2f}x), shells {row['cpu_children'] * 1000:.2f} ms"
              f" ({row['cpu_children'] / first['cpu_children']:.2f}x)")


if __name__ == "__main__":
    main()
