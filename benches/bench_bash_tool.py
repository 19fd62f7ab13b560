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

`--note` measures instead what the durable note of commands under way (`<sid>.shell-pending.json`,
`checkpoints/shell_pending.py`) adds to a tracked call: the child opens a session's checkpoint
manager with shell tracking on a small project and times `before_shell`, the command and
`after_shell` per call (the note is written before the command, fsynced, and removed behind the
records), once as is and once with `shell_pending.note` replaced by a no-op; the two alternate
in every round, and the rows are `NAME+note` and `NAME-note`.

    python benches/bench_bash_tool.py --python after=.venv/bin/python --note --rounds 6 --commands 100
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess

from bench_args import parse_side_by_side

CHILD = r"""
import json, resource, shutil, statistics, sys, tempfile, time
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
shutil.rmtree(cwd, ignore_errors=True)
"""

TRACKED_CHILD = r"""
import json, os, resource, shutil, statistics, sys, tempfile, time, uuid
from pathlib import Path
root = Path(tempfile.mkdtemp(prefix="bench-note-"))
os.environ["COMMANDCODE_HOME"] = str(root / "home")
from commandcode.agent.bash_tool import run_bash
from commandcode.checkpoints import shell_pending
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.config.paths import project_dir
from commandcode.sessions.files import SessionFiles

count, with_note = int(sys.argv[1]), sys.argv[2] == "on"
cwd = root / "proj"
(cwd / "src").mkdir(parents=True)
for number in range(50):
    (cwd / "src" / f"f{number}.txt").write_text(f"file {number}\n")
if not with_note:
    shell_pending.note = lambda *args, **kwargs: False
manager = CheckpointManager.for_session(SessionFiles(str(project_dir(cwd)), str(uuid.uuid4())), cwd,
                                        compatible_backups=False)
manager.track_shell(lambda _: None)
manager.open_checkpoint("bench", 0, None)
def call():
    manager.before_shell()
    run_bash({"command": "true"}, cwd)
    manager.after_shell()
call()  # the guard and the baseline start here
manager.wait_saved()
walls = []
before_self, before_children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
for _ in range(count):
    started = time.perf_counter()
    call()
    walls.append(time.perf_counter() - started)
    manager.wait_saved()  # the note's removal, behind the records: not on the call's path, waited for here
after_self, after_children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
manager.close()
cpu = lambda a, b: (a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime) / count
walls.sort()
print(json.dumps({"median": statistics.median(walls), "p10": walls[len(walls) // 10], "p90": walls[len(walls) * 9 // 10],
                  "cpu_self": cpu(after_self, before_self), "cpu_children": cpu(after_children, before_children)}))
shutil.rmtree(root, ignore_errors=True)
"""


def main() -> None:
    options = parse_side_by_side(__doc__, variant="python", variant_help="an interpreter", count="commands",
                                 count_default=200,
                                 switches=(("note", "time tracked calls with and without the pending note"),))
    note = options.switches["note"]
    runs: list[tuple[str, str, list[str]]] = []  # (row name, interpreter, child arguments)
    for name, python in options.variants:
        if note:
            runs += [(f"{name}+note", python, ["-c", TRACKED_CHILD, str(options.count), "on"]),
                     (f"{name}-note", python, ["-c", TRACKED_CHILD, str(options.count), "off"])]
        else:
            runs.append((name, python, ["-c", CHILD, str(options.count)]))
    pythons = [(name, python) for name, python, _ in runs]
    figures: dict[str, list[dict[str, float]]] = {name: [] for name, _ in pythons}
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    for _round in range(options.rounds):
        for name, python, arguments in runs:
            done = subprocess.run([python, *arguments], env=env, capture_output=True, text=True, check=True)
            figures[name].append(json.loads(done.stdout))
    print(f"load average {' '.join(f'{value:.1f}' for value in os.getloadavg())} on {os.cpu_count()} CPUs; "
          f"{options.rounds} rounds of {options.count} commands (`true`{', tracked' if note else ''})")
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
