#!/usr/bin/env python3
"""A verified 1,000-file rewind and its redo, old build against new, interleaved run by run.

    python benches/compare_rewind.py --project DIR --before OLD_VENV_PYTHON --after NEW_VENV_PYTHON
                                     [--runs 10] [--work /tmp/ccpair] [--edit append|prepend] [--fresh]

On a shared, loaded machine two benchmark runs minutes apart measure different machines; this
runs one long-lived worker per build (each sets up its own copy of `--project`, 1,000 edited
files backed up as `bench_checkpoints.py` does) and alternates them: a rewind then a redo, each
after the trash of the last one was removed and dirty pages flushed. It prints every pair, the
medians and spreads, the per-pair ratios after/before, the CPU time of each (all threads: on a
loaded machine the steadier figure), and the first rewind of each (first contact: its redo
point stores every replaced file as a new object). A worker checks every restored byte.

Each operation has two times: when it returns, and when it is settled (returned, then
`store.settle_restores()` waited for the flush and the journal's removal a build that commits
before its flush finishes on a native thread; a build without it is settled when it returns).
The CPU times are taken once settled (the settle thread's included).

`--edit` is how each file is changed: a line appended (the default, as an edit of a file's end
or of one line in place leaves the rest of its blocks as they were), or a line put first (every
byte shifts: the restore rewrites every block of every file).

`--fresh` gives every run's edit new bytes (a run-unique line, the records' after-digests
rewritten to match, outside the timing), so each rewind's redo point stores 1,000 new objects:
what a user's first rewind after a turn costs. Without it, only the first rewind does; the
later ones find what they keep already in the store.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def edited_project(project_source: Path, base: Path, edit: str = "append") -> tuple[Any, Path, dict[Path, bytes],
                                                                                   dict[Path, bytes], bytes]:
    """A copy of `project_source` under `base` (its own data dir) with 1,000 of its files edited in
    one checkpoint, each backed up first: (session files, project, original bytes, edited bytes,
    the checkpoint records as written)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_checkpoints as bench
    from commandcode.checkpoints import store as backups
    from commandcode.checkpoints.manager import CheckpointManager

    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    project = base / "project"
    shutil.copytree(project_source, project)
    bench.use_home(base / "home")
    files = [path for path in bench.project_files(project) if path.stat().st_size <= backups.MAX_BACKUP_SIZE]
    chosen = sorted(random.Random(3).sample(files, 1000))
    originals = {path: path.read_bytes() for path in chosen}
    session = bench.new_session(project)
    manager = CheckpointManager.for_session(session, project)
    manager.open_checkpoint("edit 1,000 files", 0, None)
    for path in chosen:
        manager.backup_before_edit(str(path))
        path.write_bytes(b"# changed\n" + originals[path] if edit == "prepend" else originals[path] + b"\n# changed\n")
        manager.record_after_edit(str(path))
    manager.flush()
    edited = {path: path.read_bytes() for path in chosen}
    return session, project, originals, edited, session.checkpoints.read_bytes()


def worker(project_source: Path, base: Path, edit: str = "append", fresh: bool = False) -> None:
    from commandcode.checkpoints import store as backups

    session, project, originals, edited, records = edited_project(project_source, base, edit)
    import bench_checkpoints as bench  # importable once `edited_project` put benches/ on the path
    store = backups.BackupStore()
    operations = _rewind_and_redo(session, project, store)
    settle: Callable[[], object] = getattr(backups, "settle_restores", lambda: None)
    print("ready", flush=True)
    for run, _ in enumerate(sys.stdin):
        if fresh:
            edited = _fresh_edit(session, project, originals, records, run)
        spent, cpu, settled = [], [], []
        for operation, wanted in zip(operations, (originals, edited)):
            bench.wait_for_trash_removal()
            os.sync()
            start, start_cpu = time.perf_counter(), time.process_time()
            operation()
            spent.append((time.perf_counter() - start) * 1000)
            assert not settle()
            settled.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
            assert all(path.read_bytes() == content for path, content in wanted.items())
        session.checkpoints.write_bytes(records)
        print(f"{spent[0]:.1f} {spent[1]:.1f} {cpu[0]:.1f} {cpu[1]:.1f} {settled[0]:.1f} {settled[1]:.1f}", flush=True)


def _fresh_edit(session: Any, project: Path, originals: dict[Path, bytes], records: bytes, run: int) -> dict[Path, bytes]:
    """Gives every chosen file new bytes for this run, and the turn's records the after-digests
    of those bytes (as if the turn's tools had written them); returns the new bytes."""
    from commandcode.checkpoints import store as backups
    from commandcode.checkpoints.records import read_checkpoints, write_checkpoints

    edited = {path: data + f"\n# changed in run {run}\n".encode() for path, data in originals.items()}
    digests = {str(path): backups.content_id(data) for path, data in edited.items()}
    for path, data in edited.items():
        path.write_bytes(data)
    session.checkpoints.write_bytes(records)
    parsed = read_checkpoints(session.checkpoints)
    for record in parsed:
        for item in record.files:
            key = os.path.normpath(os.path.join(project, item.path))
            if key in digests:
                item.after_hash = digests[key]
    write_checkpoints(session.checkpoints, parsed)
    assert sum(item.after_hash in digests.values() for record in parsed for item in record.files) == len(edited)
    return edited


def _rewind_and_redo(session: Any, project: Path, store: Any) -> tuple[Callable[[], object], Callable[[], object]]:
    """The rewind to checkpoint 1 and its redo, in the call shape of the build under test."""
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.rewind import redo, rewind

    try:
        from commandcode.checkpoints.rewind import RewindOptions
    except ImportError:  # a build before #27 made the options one value
        return (lambda: rewind(session, project, 1, RewindMode.CODE, store=store),
                lambda: redo(session, project, store=store))
    options = RewindOptions(store=store)
    return (lambda: rewind(session, project, 1, RewindMode.CODE, options), lambda: redo(session, project, options))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, required=True, help="a project (bench_checkpoints' work/project)")
    parser.add_argument("--before", required=True, help="the old build's python")
    parser.add_argument("--after", required=True, help="the new build's python")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ccpair"))
    parser.add_argument("--edit", choices=("append", "prepend"), default="append", help="how each file is edited")
    parser.add_argument("--fresh", action="store_true", help="new edit bytes every run (the redo point stores them)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker is not None:
        worker(arguments.project, arguments.worker, arguments.edit, arguments.fresh)
        return
    # the workers run in / (no build's tree on their path): every path they get is absolute
    builds = {"before": os.path.abspath(arguments.before), "after": os.path.abspath(arguments.after)}
    arguments.project, arguments.work = arguments.project.absolute(), arguments.work.absolute()
    workers = {who: subprocess.Popen([python, __file__, "--project", str(arguments.project), "--before", "-",
                                      "--after", "-", "--edit", arguments.edit, *(["--fresh"] if arguments.fresh else []),
                                      "--worker", str(arguments.work / who)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/")
               for who, python in builds.items()}
    for process in workers.values():
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    figures: dict[str, list[tuple[float, float]]] = {who: [] for who in builds}
    cpu: dict[str, list[tuple[float, float]]] = {who: [] for who in builds}
    settled: dict[str, list[tuple[float, float]]] = {who: [] for who in builds}
    for run in range(arguments.runs + 1):
        for who in (("before", "after") if run % 2 == 0 else ("after", "before")):
            process = workers[who]
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write("go\n")
            process.stdin.flush()
            rewind_ms, redo_ms, rewind_cpu, redo_cpu, rewind_settled, redo_settled = map(
                float, process.stdout.readline().split())
            figures[who].append((rewind_ms, redo_ms))
            cpu[who].append((rewind_cpu, redo_cpu))
            settled[who].append((rewind_settled, redo_settled))
        print(run, {who: figures[who][-1] for who in builds}, "settled", {who: settled[who][-1] for who in builds},
              "load", os.getloadavg())
    for process in workers.values():
        assert process.stdin is not None
        process.stdin.close()
        process.wait()
    for who in builds:
        rest = figures[who][1:]
        print(f"{who}: first rewind {figures[who][0][0]:.1f} ms; median rewind "
              f"{statistics.median(row[0] for row in rest):.1f} ms, redo {statistics.median(row[1] for row in rest):.1f} ms "
              f"(spread {min(row[0] for row in rest):.0f}-{max(row[0] for row in rest):.0f}, "
              f"{min(row[1] for row in rest):.0f}-{max(row[1] for row in rest):.0f}); CPU (all threads) median rewind "
              f"{statistics.median(row[0] for row in cpu[who][1:]):.1f} ms, redo {statistics.median(row[1] for row in cpu[who][1:]):.1f} ms, "
              f"first rewind {cpu[who][0][0]:.1f} ms")
        rest = settled[who][1:]
        print(f"{who} settled (returned + the wait for its settle): median rewind "
              f"{statistics.median(row[0] for row in rest):.1f} ms, redo {statistics.median(row[1] for row in rest):.1f} ms "
              f"(spread {min(row[0] for row in rest):.0f}-{max(row[0] for row in rest):.0f}, "
              f"{min(row[1] for row in rest):.0f}-{max(row[1] for row in rest):.0f}); first rewind {settled[who][0][0]:.1f} ms")
    for column, name in ((0, "rewind"), (1, "redo")):
        ratios = [new[column] / old[column] for new, old in zip(figures["after"][1:], figures["before"][1:])]
        print(f"{name} after/before: median of per-pair ratios {statistics.median(ratios):.3f}")
        ratios = [new[column] / old[column] for new, old in zip(settled["after"][1:], settled["before"][1:])]
        print(f"{name} settled after/before: median of per-pair ratios {statistics.median(ratios):.3f}")
        ratios = [new[column] / old[column] for new, old in zip(cpu["after"][1:], cpu["before"][1:])]
        print(f"{name} CPU after/before: median of per-pair ratios {statistics.median(ratios):.3f}")
    print(f"first rewind after/before: {figures['after'][0][0] / figures['before'][0][0]:.3f}")


if __name__ == "__main__":
    main()
