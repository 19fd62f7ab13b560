#!/usr/bin/env python3
"""Checkpoint benchmarks, side by side with the baselines, in one run.

    .venv/bin/python benches/bench_checkpoints.py --work /tmp/ccbench [--runs 5] [--json OUT]
                                                  [--only edit,turn,restore,store]

`--work` gets a generated 5,000-file / 100 MiB project (`make_project.py`), a data dir and a
shadow git repository; put it on the disk you care about (fsync costs are part of the figures).
Measures, each as the median of `--runs` (after one warm-up):

1. **edit**: backup overhead of one edit of a 100 KB file (`backup_before_edit` +
   `record_after_edit`, every byte durable), on the work disk and on tmpfs (no fsync cost).
2. **turn**: a turn that edits 20 files of the project: ours (`open_checkpoint` + 20 backups)
   against a shadow git repository (`git add -A && git commit`, as Gemini CLI and Cline do),
   plus the one-off first snapshot each approach needs.
3. **restore**: a code rewind of 1,000 files with full pre-verification (every object
   decompressed and hashed, every target checked), end to end through `rewind()`, and the
   native restore alone, both overwriting files in place (the default) and replacing each by a
   new file (`in_place=False`, the method before in-place writes); the redo of that rewind (its
   own redo point included; target < 100 ms for both), and the first rewind in a fresh data dir
   (its redo point stores every replaced file as a new object); target < 0.3 s, opencode's
   fixed restore takes 674 ms; `git checkout` of the same files from the shadow repository for
   reference.
4. **store**: bytes on disk after backing up the whole project against its unique bytes, a
   second session backing up the same tree, and the shadow repository's size.

Every measurement also checks its result (restored bytes, object counts).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))
try:
    import commandcode  # noqa: F401  (installed, or `maturin develop`)
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))

import make_project
from commandcode.checkpoints import compatible
from commandcode.checkpoints import store as backups
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.records import FileBackup, read_checkpoints
from commandcode.checkpoints.rewind import redo, rewind
from commandcode.checkpoints.rewind_code import plan_code
from commandcode.config.paths import data_dir, project_dir
from commandcode.sessions.files import SessionFiles

OPENCODE_RESTORE_1000_MS = 674.0
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def wait_for_trash_removal(timeout: float = 10.0) -> None:
    """Waits until the background removal of set-aside originals (the trash folders beside the
    restore journals) has finished, so that no measurement shares the disk with it."""
    journals = data_dir() / "journals"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and journals.is_dir() and any(journals.glob(".*.trash")):
        time.sleep(0.01)


def timed(action: Callable[[], object], *, settle: bool = False) -> float:
    """Wall time of `action`; with `settle`, an earlier restore's background cleanup is waited
    for and dirty pages are flushed first, so that a measurement never pays for an earlier one's
    writeback (fsync on ext4 would)."""
    if settle:
        wait_for_trash_removal()
        os.sync()
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def folder_bytes(path: Path) -> int:
    """Bytes on disk (allocated blocks), like `du`."""
    total = 0
    for folder, _, names in os.walk(path):
        for name in names:
            total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def project_files(project: Path) -> list[Path]:
    return sorted(path for path in project.rglob("*") if path.is_file() and ".git" not in path.parts)


def use_home(home: Path) -> None:
    os.environ["COMMANDCODE_HOME"] = str(home)


def new_session(project: Path) -> SessionFiles:
    import uuid

    return SessionFiles(project_dir(project), str(uuid.uuid4()))


# ---------------------------------------------------------------------------------------------


def _backed_up(manager: CheckpointManager, item: FileBackup) -> bytes:
    """The bytes a backup item holds: a compatible (sha256) item's shared raw copy, else our
    store's object."""
    if item.algorithm == backups.SHA256 and item.hash is not None:
        return (compatible.raw_objects_dir() / item.hash[:2] / item.hash).read_bytes()
    assert item.hash is not None
    return manager.store.read(item.hash)


def bench_edit(work: Path, runs: int) -> dict[str, object]:
    """One edit of a 100 KB file: backup before + digest after, each durable."""
    results: dict[str, object] = {}
    places = {"disk": work / "edit"}
    if Path("/dev/shm").is_dir():
        places["tmpfs"] = Path(tempfile.mkdtemp(prefix="ccbench-", dir="/dev/shm"))
    for label, base in places.items():
        project = base / "project"
        project.mkdir(parents=True, exist_ok=True)
        use_home(base / "home")
        manager = CheckpointManager.for_session(new_session(project), project)
        target = project / "module.py"
        rng = random.Random(7)
        samples, open_samples = [], []
        for run in range(runs + 1):
            target.write_bytes(bytes(rng.getrandbits(8) for _ in range(64)) + b"x = 1\n" * (100_000 // 6))
            opened = timed(lambda: manager.open_checkpoint(f"turn {run}", run * 2, None), settle=True)
            backup = timed(lambda: manager.backup_before_edit(str(target)))
            target.write_bytes(target.read_bytes() + b"# edited\n")
            after = timed(lambda: manager.record_after_edit(str(target)))
            if run:
                samples.append(backup + after)
                open_samples.append(opened)
        item = manager.records[-1].files[0]
        assert _backed_up(manager, item)[:64] == target.read_bytes()[:64]
        results[label] = {"edit_ms": median_ms(samples), "open_checkpoint_ms": median_ms(open_samples)}
        if label == "tmpfs":
            shutil.rmtree(base, ignore_errors=True)
    return results


# ---------------------------------------------------------------------------------------------


def git(shadow: Path, project: Path, *arguments: str) -> None:
    environment = {**os.environ, **GIT_ENV, "GIT_DIR": str(shadow), "GIT_WORK_TREE": str(project)}
    subprocess.run(["git", *arguments], cwd=project, env=environment, check=True, capture_output=True)


def git_snapshot(shadow: Path, project: Path) -> None:
    git(shadow, project, "add", "-A")
    git(shadow, project, "commit", "-q", "--no-verify", "--allow-empty", "-m", "checkpoint")


def bench_turn(work: Path, project: Path, runs: int) -> dict[str, object]:
    """A turn that edits 20 files: our checkpoint work against a shadow git snapshot."""
    files = project_files(project)
    shadow = work / "shadow.git"
    shutil.rmtree(shadow, ignore_errors=True)
    git(shadow, project, "init", "-q")
    first_git = timed(lambda: git_snapshot(shadow, project))
    use_home(work / "home-turn")
    manager = CheckpointManager.for_session(new_session(project), project)
    ours, theirs = [], []
    step = len(files) // 20
    for run in range(runs + 1):
        chosen = [files[(index * step + run * 7) % len(files)] for index in range(20)]

        spent = timed(lambda: manager.open_checkpoint(f"edit 20 files, run {run}", run * 2, None), settle=True)
        for path in chosen:
            spent += timed(lambda: manager.backup_before_edit(str(path)))
            with open(path, "ab") as handle:  # the tool's own write: not checkpoint work
                handle.write(f"\n# edited by the agent, run {run}\n".encode())
            spent += timed(lambda: manager.record_after_edit(str(path)))
        git_spent = timed(lambda: git_snapshot(shadow, project), settle=True)
        if run:
            ours.append(spent)
            theirs.append(git_spent)
    assert len(manager.records[-1].files) == 20
    return {
        "ours_turn_ms": median_ms(ours),
        "shadow_git_turn_ms": median_ms(theirs),
        "shadow_git_first_snapshot_s": round(first_git, 2),
        "ours_first_snapshot_s": 0.0,
        "shadow_repo_bytes": folder_bytes(shadow),
    }


# ---------------------------------------------------------------------------------------------


def time_rewinds(home: Path, project: Path, runs: int, count: int) -> dict[str, object]:
    """Backs up `count` files of `project`, edits them, then times rewinds of them (in a fresh
    data dir: the first rewind is a first contact)."""
    # Imported here: `compare_rewind.py` loads this module's helpers into builds from before the
    # options value (#27) too.
    from commandcode.checkpoints.rewind import RewindOptions

    shutil.rmtree(home, ignore_errors=True)
    use_home(home)
    files = project_files(project)
    rng = random.Random(3)
    chosen = sorted(rng.sample([path for path in files if path.stat().st_size <= backups.MAX_BACKUP_SIZE], count))
    originals = {path: path.read_bytes() for path in chosen}
    session = new_session(project)
    manager = CheckpointManager.for_session(session, project)
    manager.open_checkpoint(f"edit {count} files", 0, None)
    for path in chosen:
        manager.backup_before_edit(str(path))
        path.write_bytes(originals[path] + b"\n# changed\n")
        manager.record_after_edit(str(path))
    edited = {path: path.read_bytes() for path in chosen}
    records_bytes = session.checkpoints.read_bytes()
    store = backups.BackupStore()
    plan = plan_code(read_checkpoints(session.checkpoints), 0, project, session)

    def put_edits_back() -> None:
        for path, data in edited.items():
            path.write_bytes(data)
        session.checkpoints.write_bytes(records_bytes)

    end_to_end, redone, native_only, swapped, dry = [], [], [], [], []
    first = 0.0
    for run in range(runs + 1):
        spent = timed(lambda: rewind(session, project, 1, RewindMode.CODE, RewindOptions(store=store)), settle=True)
        assert all(path.read_bytes() == originals[path] for path in chosen)
        undo = timed(lambda: redo(session, project, RewindOptions(store=store)), settle=True)
        assert all(path.read_bytes() == edited[path] for path in chosen)
        put_edits_back()
        native = timed(
            lambda: backups.restore_files(store, plan.targets, session_id=session.session_id, confine_to=project),
            settle=True,
        )
        assert all(path.read_bytes() == originals[path] for path in chosen)
        put_edits_back()
        swap = timed(
            lambda: backups.restore_files(store, plan.targets, session_id=session.session_id, confine_to=project,
                                          in_place=False),
            settle=True,
        )
        assert all(path.read_bytes() == originals[path] for path in chosen)
        put_edits_back()
        checked = timed(lambda: rewind(session, project, 1, RewindMode.CODE, RewindOptions(store=store, dry_run=True)), settle=True)
        if not run:
            first = spent  # first contact: the redo point stores every replaced file as a new object
        if run:
            end_to_end.append(spent)
            redone.append(undo)
            native_only.append(native)
            swapped.append(swap)
            dry.append(checked)
    for path, data in originals.items():
        path.write_bytes(data)
    return {
        "files": count,
        "bytes": sum(len(data) for data in originals.values()),
        "ours_rewind_ms": median_ms(end_to_end),
        "ours_first_rewind_ms": round(first * 1000, 2),
        "ours_redo_ms": median_ms(redone),
        "ours_native_restore_ms": median_ms(native_only),
        "ours_native_swap_restore_ms": median_ms(swapped),
        "ours_dry_run_ms": median_ms(dry),
        "chosen": chosen,
        "originals": originals,
        "edited": edited,
    }


def bench_restore(work: Path, project: Path, runs: int, count: int = 1000) -> dict[str, object]:
    """A code rewind of `count` files with full pre-verification, on the work disk and on tmpfs,
    and the same files restored by a shadow git repository (`git checkout`, unverified)."""
    figures = time_rewinds(work / "home-restore", project, runs, count)
    chosen, originals, edited = figures.pop("chosen"), figures.pop("originals"), figures.pop("edited")
    if Path("/dev/shm").is_dir():
        memory = Path(tempfile.mkdtemp(prefix="ccbench-", dir="/dev/shm"))
        try:
            shutil.copytree(project, memory / "project")
            on_tmpfs = time_rewinds(memory / "home", memory / "project", runs, count)
            figures["tmpfs_rewind_ms"] = on_tmpfs["ours_rewind_ms"]
            figures["tmpfs_redo_ms"] = on_tmpfs["ours_redo_ms"]
            figures["tmpfs_native_restore_ms"] = on_tmpfs["ours_native_restore_ms"]
            figures["tmpfs_native_swap_restore_ms"] = on_tmpfs["ours_native_swap_restore_ms"]
        finally:
            shutil.rmtree(memory, ignore_errors=True)
    shadow = work / "shadow-restore.git"
    shutil.rmtree(shadow, ignore_errors=True)
    git(shadow, project, "init", "-q")
    git_snapshot(shadow, project)
    for path, data in edited.items():  # type: ignore[attr-defined]
        path.write_bytes(data)
    git_snapshot(shadow, project)
    git_restore = []
    for run in range(runs + 1):
        spent = timed(lambda: git(shadow, project, "checkout", "HEAD~1", "--", "."), settle=True)
        assert all(path.read_bytes() == originals[path] for path in chosen[:50])  # type: ignore[index]
        git(shadow, project, "checkout", "HEAD", "--", ".")
        if run:
            git_restore.append(spent)
    for path, data in originals.items():  # type: ignore[attr-defined]
        path.write_bytes(data)
    shutil.rmtree(shadow, ignore_errors=True)
    figures.update({"target_ms": 300.0, "opencode_ms": OPENCODE_RESTORE_1000_MS, "shadow_git_checkout_ms": median_ms(git_restore)})
    return figures


# ---------------------------------------------------------------------------------------------


def bench_store(work: Path, project: Path, shadow_repo_bytes: int) -> dict[str, object]:
    """Backs the whole project up twice (two sessions) and compares sizes."""
    home = work / "home-store"
    shutil.rmtree(home, ignore_errors=True)
    use_home(home)
    store = backups.BackupStore()
    files = [path for path in project_files(project) if path.stat().st_size <= backups.MAX_BACKUP_SIZE]
    unique: dict[str, int] = {}
    logical = 0

    def first_pass() -> None:
        nonlocal logical
        for path in files:
            snapshot = store.backup_file(path)
            assert snapshot.content_id is not None and snapshot.size is not None
            unique[snapshot.content_id] = snapshot.size
            logical += snapshot.size

    first = timed(first_pass)
    objects, stored = store.usage()
    second = timed(lambda: [store.backup_file(path) for path in files])
    objects_again, stored_again = store.usage()
    assert (objects_again, stored_again) == (objects, stored), "a second session adds nothing"
    assert objects == len(unique)
    return {
        "project_bytes": logical,
        "unique_bytes": sum(unique.values()),
        "objects": objects,
        "store_bytes": stored,
        "store_bytes_on_disk": folder_bytes(home / "objects"),
        "ratio_unique_to_store": round(sum(unique.values()) / stored, 2),
        "second_session_added_bytes": stored_again - stored,
        "full_backup_s": round(first, 2),
        "second_session_backup_s": round(second, 2),
        "real_cli_raw_copies_per_session_bytes": sum(unique.values()),
        "shadow_repo_bytes": shadow_repo_bytes,
    }


# ---------------------------------------------------------------------------------------------


def mib(value: int) -> str:
    return f"{value / (1 << 20):.1f} MiB"


def report(results: dict[str, dict]) -> str:
    rows = [row for section in SECTIONS if section in results for row in ROWS[section](results)]
    width = max(len(row[0]) for row in rows)
    lines = [f"{'measure':<{width}}  {'commandcode':<40}  baseline", "-" * (width + 60)]
    lines += [f"{name:<{width}}  {ours:<40}  {base}" for name, ours, base in rows]
    return "\n".join(lines)


def _edit_rows(results: dict[str, dict]) -> list[tuple[str, str, str]]:
    edit = results["edit"]
    return [
        ("one edit of a 100 KB file (backup + after digest)", f"{edit['disk']['edit_ms']} ms on disk"
         + (f", {edit['tmpfs']['edit_ms']} ms on tmpfs" if "tmpfs" in edit else ""), "—"),
        ("open a checkpoint", f"{edit['disk']['open_checkpoint_ms']} ms", "—"),
    ]


def _turn_rows(results: dict[str, dict]) -> list[tuple[str, str, str]]:
    turn = results["turn"]
    return [
        ("turn editing 20 of 5,000 files", f"{turn['ours_turn_ms']} ms", f"shadow git {turn['shadow_git_turn_ms']} ms"),
        ("first snapshot needed", "none", f"shadow git {turn['shadow_git_first_snapshot_s']} s"),
    ]


def _restore_rows(results: dict[str, dict]) -> list[tuple[str, str, str]]:
    restore = results["restore"]
    return [
        ("rewind 1,000 files (full pre-verification)", f"{restore['ours_rewind_ms']} ms (native {restore['ours_native_restore_ms']} ms)",
         f"opencode {restore['opencode_ms']:.0f} ms; target < {restore['target_ms']:.0f} ms; git checkout {restore['shadow_git_checkout_ms']} ms (unverified)"),
        ("redo of that rewind (verified; its own redo point included)", f"{restore['ours_redo_ms']} ms",
         f"target < 100 ms; on tmpfs {restore.get('tmpfs_redo_ms', '—')} ms"),
        ("first rewind (every replaced file a new object of its redo point)", f"{restore['ours_first_rewind_ms']} ms",
         "one run, not a median"),
        ("native restore, every file replaced by a new one (in_place=False)", f"{restore['ours_native_swap_restore_ms']} ms",
         f"in place: {restore['ours_native_restore_ms']} ms"),
        ("same rewind on tmpfs (no disk cost)", f"{restore.get('tmpfs_rewind_ms', '—')} ms (native {restore.get('tmpfs_native_restore_ms', '—')} ms)",
         f"replacing: native {restore.get('tmpfs_native_swap_restore_ms', '—')} ms"),
        ("dry run of that rewind", f"{restore['ours_dry_run_ms']} ms", "—"),
    ]


def _store_rows(results: dict[str, dict]) -> list[tuple[str, str, str]]:
    store = results["store"]
    return [
        ("store after backing up the whole project", f"{mib(store['store_bytes'])} ({mib(store['store_bytes_on_disk'])} on disk)",
         f"unique bytes {mib(store['unique_bytes'])} (×{store['ratio_unique_to_store']}); shadow git {mib(store['shadow_repo_bytes'])}; real CLI raw copies {mib(store['real_cli_raw_copies_per_session_bytes'])} per session"),
        ("a second session backing up the same tree", f"+{store['second_session_added_bytes']} bytes", "real CLI: another full copy"),
    ]


SECTIONS = ("edit", "turn", "restore", "store")
ROWS = {"edit": _edit_rows, "turn": _turn_rows, "restore": _restore_rows, "store": _store_rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (created)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help="comma-separated sections to run (default: all; store needs turn's shadow repo size, else 0)")
    arguments = parser.parse_args()
    only = set(arguments.only.split(","))
    if not only <= set(SECTIONS):
        parser.error(f"--only takes {', '.join(SECTIONS)}")
    work = arguments.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    project = work / "project"
    if not project.exists():
        print(json.dumps(make_project.generate(project, 5000, 100, 1, make_project.default_sources())), file=sys.stderr)
    subprocess.run(["cat", *map(str, project_files(project))], stdout=subprocess.DEVNULL, check=True)
    results: dict[str, dict] = {}
    runners: dict[str, Callable[[], dict]] = {
        "edit": lambda: bench_edit(work, arguments.runs * 4),
        "turn": lambda: bench_turn(work, project, arguments.runs),
        "restore": lambda: bench_restore(work, project, arguments.runs),
        "store": lambda: bench_store(work, project, results.get("turn", {}).get("shadow_repo_bytes", 0)),
    }
    for section in SECTIONS:
        if section in only:
            results[section] = runners[section]()
            print(section, json.dumps(results[section]), file=sys.stderr)
    print(report(results))
    if arguments.json:
        arguments.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
