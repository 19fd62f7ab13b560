#!/usr/bin/env python3
"""Shell tracking benchmarks, side by side with a shadow git repository, in one run.

    .venv/bin/python benches/bench_shell_tracking.py --work /tmp/ccbench [--runs 5] [--json OUT]

`--work` gets (or reuses) the 5,000-file / 100 MiB project of `bench_checkpoints.py`. Measures:

1. **baseline**: the first baseline of the project (`ShellTracker.refresh` into an empty store:
   list, stat, read, hash, compress, store) against #3's full backup of the same files
   (`BackupStore.backup_file` over every file); and how long a simulated 500 ms model call takes
   while the baseline runs beside it in its thread.
2. **bash**: a `bash` call that changes 20 files (appends to 15, deletes 3, creates 2): the
   tracking it adds to the turn (`before_shell` + `after_shell`, with the session's baseline
   sidecar as a real session has it, so the note of the call under way is included; wall and
   CPU time) against the bare command, and a shadow git snapshot (`git add -A && git commit`) after the same command.
   The checkpoint record is then written durably on the tracker's worker while the next model
   call runs (waited for before the turn is reported): reported apart, as the time from the
   end of `after_shell` until it is on disk.
3. **store**: how much the store grows per such call against the unique new bytes, and the
   shadow repository's size.

Every measurement checks its result (the changes recorded, the restored bytes of one rewind).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))
try:
    import commandcode  # noqa: F401  (installed, or `maturin develop`)
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))

import bench_checkpoints as shared
import make_project
from commandcode.checkpoints import store as backups
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.shell_tracking import ShellTracker

MODEL_CALL_SECONDS = 0.5


def bench_baseline(work: Path, project: Path) -> dict[str, object]:
    files = [path for path in shared.project_files(project) if path.stat().st_size <= backups.MAX_BACKUP_SIZE]
    shared.use_home(work / "home-full-backup")
    shutil.rmtree(work / "home-full-backup", ignore_errors=True)
    store = backups.BackupStore()
    full_cpu = time.process_time()
    full = shared.timed(lambda: [store.backup_file(path) for path in files], settle=True)
    full_cpu = time.process_time() - full_cpu
    shutil.rmtree(work / "home-baseline", ignore_errors=True)
    shared.use_home(work / "home-baseline")
    tracker = ShellTracker(project, backups.BackupStore())
    baseline_cpu = time.process_time()
    baseline = shared.timed(tracker.refresh, settle=True)
    baseline_cpu = time.process_time() - baseline_cpu
    assert len(tracker.cache) == len(files), (len(tracker.cache), len(files))
    shutil.rmtree(work / "home-concurrent", ignore_errors=True)
    shared.use_home(work / "home-concurrent")
    concurrent = ShellTracker(project, backups.BackupStore())
    concurrent.start()
    model = shared.timed(lambda: time.sleep(MODEL_CALL_SECONDS))
    still_running = concurrent.running
    concurrent.wait()
    return {"files": len(files), "full_backup_s": round(full, 2), "first_baseline_s": round(baseline, 2),
            "full_backup_cpu_s": round(full_cpu, 2), "first_baseline_cpu_s": round(baseline_cpu, 2),
            "model_call_during_baseline_ms": round(model * 1000, 1), "baseline_still_running_after_model_call": still_running}


def _change_20(project: Path, run: int, files: list[Path]) -> str:
    chosen = [files[(index * 97 + run * 13) % len(files)] for index in range(18)]
    appends, deletes = chosen[:15], chosen[15:]
    created = [project / f"created/run{run}_{index}.txt" for index in range(2)]
    script = "; ".join([*(f"echo '# run {run}' >> '{path}'" for path in appends), *(f"rm -f '{path}'" for path in deletes),
                        "mkdir -p created", *(f"echo 'made in run {run}' > '{path}'" for path in created)])
    return script


def bench_bash(work: Path, project: Path, runs: int) -> dict[str, object]:
    shutil.rmtree(work / "home-bash", ignore_errors=True)
    shared.use_home(work / "home-bash")
    files = [path for path in shared.project_files(project) if path.stat().st_size <= backups.MAX_BACKUP_SIZE]
    session = shared.new_session(project)
    manager = CheckpointManager.for_session(session, project)
    # with the session's baseline sidecar, as `track_shell` sets it up: a call is noted durably before it runs
    manager.shell = ShellTracker(project, manager.store,
                                 sidecar=session.directory / (session.session_id + ".shell-baseline.json"))
    manager.open_checkpoint("baseline", 0, None)
    manager.shell.wait()
    shadow = work / "shadow-bash.git"
    shutil.rmtree(shadow, ignore_errors=True)
    shared.git(shadow, project, "init", "-q")
    git_first = shared.timed(lambda: shared.git_snapshot(shadow, project), settle=True)
    ours, ours_cpu, bare, theirs, growth, unique, durable = [], [], [], [], [], [], []
    for run in range(runs + 1):
        script = _change_20(project, run, files)
        manager.open_checkpoint(f"bash run {run}", run * 2, None)
        manager.shell.wait()  # the turn-start refresh runs while the model is called: not bash overhead
        before_usage = manager.store.usage()[1]
        cpu = time.process_time()
        tracked = shared.timed(manager.before_shell, settle=True)
        cpu = time.process_time() - cpu
        command = shared.timed(lambda: subprocess.run(["bash", "-c", script], cwd=project, check=True))
        cpu_after = time.process_time()
        tracked += shared.timed(manager.after_shell)
        cpu += time.process_time() - cpu_after
        written = shared.timed(manager.wait_saved)
        recorded = [item for item in manager.records[-1].files if item.extra.get("source") == "shell"
                    and "afterKind" not in item.extra]  # a folder a deletion left empty is an item too
        assert len(recorded) == 20, [item.path for item in recorded]
        new_bytes = sum(path.stat().st_size for path in project.rglob("*") if path.is_file()
                        and str(path) in {item.path for item in recorded})
        git_spent = shared.timed(lambda: shared.git_snapshot(shadow, project), settle=True)
        if run:
            ours.append(tracked)
            ours_cpu.append(cpu)
            durable.append(written)
            bare.append(command)
            theirs.append(git_spent)
            growth.append(manager.store.usage()[1] - before_usage)
            unique.append(new_bytes)
        files = [path for path in files if path.exists()]
    return {
        "tracking_ms": shared.median_ms(ours),
        "tracking_cpu_ms": shared.median_ms(ours_cpu),
        "record_durable_after_ms": shared.median_ms(durable),
        "bare_bash_ms": shared.median_ms(bare),
        "shadow_git_ms": shared.median_ms(theirs),
        "shadow_git_first_snapshot_s": round(git_first, 2),
        "store_growth_bytes": int(statistics.median(growth)),
        "unique_new_bytes": int(statistics.median(unique)),
        "shadow_repo_bytes": shared.folder_bytes(shadow),
        "store_bytes": manager.store.usage()[1],
    }


def report(results: dict[str, dict[str, object]]) -> str:
    baseline, bash = results["baseline"], results["bash"]
    rows = [
        "| measure | ours | shadow git | target |",
        "|---|---|---|---|",
        f"| first snapshot of {baseline['files']:,} files | {baseline['first_baseline_s']} s, CPU "
        f"{baseline['first_baseline_cpu_s']} s (full backup: {baseline['full_backup_s']} s, CPU "
        f"{baseline['full_backup_cpu_s']} s) | {bash['shadow_git_first_snapshot_s']} s | ≤ full backup |",
        f"| simulated {int(MODEL_CALL_SECONDS * 1000)} ms model call during the baseline | "
        f"{baseline['model_call_during_baseline_ms']} ms | — | concurrent |",
        f"| bash call changing 20 files (added to the turn) | {bash['tracking_ms']} ms, CPU {bash['tracking_cpu_ms']} ms "
        f"(command itself: {bash['bare_bash_ms']} ms; record durable {bash['record_durable_after_ms']} ms later, "
        f"beside the next model call) | {bash['shadow_git_ms']} ms | ≤ 30 ms |",
        f"| store growth per call | {bash['store_growth_bytes']:,} B (unique new bytes: {bash['unique_new_bytes']:,} B) "
        f"| repo {bash['shadow_repo_bytes']:,} B in all | unique bytes only |",
    ]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (created)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    arguments = parser.parse_args()
    work = arguments.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    project = work / "project"
    if not project.exists():
        print(json.dumps(make_project.generate(project, 5000, 100, 1, make_project.default_sources())), file=sys.stderr)
    tracked = work / "project-shell"  # the bash calls change it: a fresh copy each run
    shutil.rmtree(tracked, ignore_errors=True)
    shutil.copytree(project, tracked, symlinks=True)
    project = tracked
    subprocess.run(["cat", *map(str, shared.project_files(project))], stdout=subprocess.DEVNULL, check=True)
    results = {"baseline": bench_baseline(work, project)}
    print("baseline", json.dumps(results["baseline"]), file=sys.stderr)
    results["bash"] = bench_bash(work, project, arguments.runs)
    print("bash", json.dumps(results["bash"]), file=sys.stderr)
    print(report(results))
    if arguments.json:
        arguments.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
