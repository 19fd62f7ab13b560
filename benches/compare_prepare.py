#!/usr/bin/env python3
"""The rewind's verification (`prepare_restore`) alone, two builds side by side in one run.

    python benches/compare_prepare.py --project /tmp/rw4/project --before OLD/.venv/bin/python \\
        --after NEW/.venv/bin/python [--runs 20] [--work /tmp/ccprepare]

Each build's worker sets up a copy of `--project` as `compare_rewind.py` does (1,000 edited files
backed up), then starts the rewind and, inside it, serves `prepare_restore` calls on command (each
verifies all 1,000 targets and sources, then is closed unused), then does the same inside the redo.
The calls alternate between the builds (before/after, then after/before), so load hits both alike.
Prints the medians of wall time and of process CPU time (all threads: robust on a loaded machine),
and the after/before ratios. The first call of each build is left out (warm-up).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def worker(project_source: Path, work: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_checkpoints as bench
    import compare_rewind
    from commandcode.checkpoints import store as backups

    session, project, _originals, _edited, _records = compare_rewind.edited_project(project_source, work)
    operations = compare_rewind._rewind_and_redo(session, project, backups.BackupStore())
    prepare = backups.prepare_restore

    def serving(*arguments: Any, **keywords: Any) -> Any:
        print("ready", flush=True)
        for line in sys.stdin:
            if line.strip() != "go":
                break
            wall, cpu = time.perf_counter(), time.process_time()
            prepare(*arguments, **keywords).__exit__(None, None, None)
            print((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000, flush=True)
        return prepare(*arguments, **keywords)

    backups.prepare_restore = serving  # type: ignore[assignment]
    for operation in operations:
        bench.wait_for_trash_removal()
        os.sync()
        operation()
    shutil.rmtree(work, ignore_errors=True)


def _call(process: subprocess.Popen[str]) -> tuple[float, float]:
    """One `prepare_restore` in `process`: its wall and CPU milliseconds."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("go\n")
    process.stdin.flush()
    wall, cpu = process.stdout.readline().split()
    return float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--before", help="the old build's python")
    parser.add_argument("--after", help="the new build's python")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ccprepare"))
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker is not None:
        worker(arguments.project, arguments.worker)
        return
    builds = {"before": arguments.before, "after": arguments.after}
    workers = {who: subprocess.Popen([python, __file__, "--project", str(arguments.project),
                                      "--worker", str(arguments.work / who)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/")
               for who, python in builds.items()}
    for phase in ("rewind", "redo"):
        for process in workers.values():
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        figures: dict[str, list[tuple[float, float]]] = {who: [] for who in builds}
        order = [(run, who) for run in range(arguments.runs + 1)
                 for who in (("before", "after") if run % 2 == 0 else ("after", "before"))]
        for run, who in order:
            figure = _call(workers[who])
            if run:  # the first call of each build warms it up
                figures[who].append(figure)
        medians = {who: [statistics.median(row[column] for row in rows) for column in (0, 1)]
                   for who, rows in figures.items()}
        before, after = medians["before"], medians["after"]
        print(f"{phase} prepare_restore medians: wall {before[0]:.1f} -> {after[0]:.1f} ms "
              f"({after[0] / before[0]:.2f}x), CPU {before[1]:.1f} -> {after[1]:.1f} ms ({after[1] / before[1]:.2f}x)",
              flush=True)
        for process in workers.values():
            assert process.stdin is not None
            process.stdin.write("next\n")
            process.stdin.flush()
    for process in workers.values():
        assert process.stdin is not None
        process.stdin.close()
        process.wait()


if __name__ == "__main__":
    main()
