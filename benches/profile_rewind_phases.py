#!/usr/bin/env python3
"""Where a verified 1,000-file rewind and its redo spend their time, phase by phase, in one build.

    python benches/profile_rewind_phases.py --project /tmp/rw4/project --work /tmp/rwphases [--runs 5] [--fresh]

Sets up a copy of `--project` as `compare_rewind.py` does (1,000 edited files backed up), then
runs rewind and redo `--runs` times with timers around the phases of `checkpoints/rewind_code.py`:
the records' parse (`parse_checkpoints`, in `rewind.py`), planning in Python (`plan_code`), verification (`prepare_restore`: every target and source read
and hashed), the redo point (`_keep_current`, of which `keep` is the native store's part), the
checkpoints file's bytes (`checkpoints_bytes`), and the native commit (`commit`: journal, writes,
`syncfs`, journal removal; in a build whose settle runs on a native thread, the commit up to its
return, and `commit_settled` adds the wait for the settle, `store.settle_restores()`, as does
`total_settled` to `total`), and the temps killed writes left (`leftovers`: the time the operation's
own thread spends on them; a build with `LeftoverSweep` lists the folders on a thread of its own
while it plans, so this is its start and its wait); `total` is the whole operation (opening the
session, the lock and the records are the rest), `cpu_settled` its process CPU (all threads) until
settled, the steadier figure on a loaded machine. Prints the median of each phase over the runs
after the first. Run it with each build's python (`/work/wt/integ/.venv/bin/python benches/...`) to compare.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

PHASES = ("parse_checkpoints", "plan_code", "prepare_restore", "_keep_current", "keep", "checkpoints_bytes", "commit",
          "commit_settled", "leftovers")


def _timed(owner: Any, name: str, spent: dict[str, float], phase: str | None = None) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*arguments: Any, **keywords: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*arguments, **keywords)
        finally:
            spent[phase or name] += (time.perf_counter() - start) * 1000

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/rwphases"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fresh", action="store_true", help="new edit bytes every run (the redo point stores them)")
    arguments = parser.parse_args()

    import bench_checkpoints as bench
    import compare_rewind
    from commandcode.checkpoints import rewind, rewind_code
    from commandcode.checkpoints import store as backups

    spent: dict[str, float] = collections.defaultdict(float)
    for owner, name in ((rewind_code, "plan_code"), (backups, "prepare_restore"), (rewind_code, "_keep_current"),
                        (backups.PreparedRestore, "keep"), (backups.PreparedRestore, "commit"),
                        (rewind_code, "checkpoints_bytes")):
        _timed(owner, name, spent)
    if hasattr(rewind, "parse_checkpoints"):  # the records' parse (a build before it read them once has none)
        _timed(rewind, "parse_checkpoints", spent)
    if hasattr(rewind, "LeftoverSweep"):  # the sweep's start and its wait, on the operation's thread
        _timed(rewind.LeftoverSweep, "__init__", spent, "leftovers")
        _timed(rewind.LeftoverSweep, "finish", spent, "leftovers")
    else:  # an older build: the whole pass, on the operation's thread
        _timed(rewind, "remove_leftovers", spent, "leftovers")
    settle: Callable[[], object] = getattr(backups, "settle_restores", lambda: None)
    session, project, originals, edited, records = compare_rewind.edited_project(arguments.project, arguments.work)
    operations = compare_rewind._rewind_and_redo(session, project, backups.BackupStore())
    rows: dict[str, list[dict[str, float]]] = {"rewind": [], "redo": []}
    for run in range(arguments.runs):
        if arguments.fresh:
            edited = compare_rewind._fresh_edit(session, project, originals, records, run)
        for (name, operation), wanted in zip(zip(rows, operations), (originals, edited)):
            bench.wait_for_trash_removal()
            os.sync()
            spent.clear()
            start, start_cpu = time.perf_counter(), time.process_time()
            operation()
            returned = time.perf_counter()
            settle()
            waited = (time.perf_counter() - returned) * 1000
            row = {phase: spent.get(phase, 0.0) for phase in PHASES}
            row["total"] = (returned - start) * 1000
            row["commit_settled"] = row["commit"] + waited
            row["total_settled"] = row["total"] + waited
            row["cpu_settled"] = (time.process_time() - start_cpu) * 1000
            assert all(path.read_bytes() == content for path, content in wanted.items())
            rows[name].append(row)
        session.checkpoints.write_bytes(records)
    for name, measured in rows.items():
        kept = measured[1:] or measured
        print(name, " ".join(f"{phase}={statistics.median(row[phase] for row in kept):.1f}"
                             for phase in (*PHASES, "total", "total_settled", "cpu_settled")), flush=True)
    shutil.rmtree(arguments.work, ignore_errors=True)


if __name__ == "__main__":
    main()
