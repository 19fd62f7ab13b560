"""Live GC roots (`checkpoints/gc_roots.py`): the objects a running session's shell-tracking
baseline counts on survive the store's garbage collection however old they are, until the
process stops (its roots file goes) or dies (kill -9: the next collection removes its file)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from commandcode.checkpoints.gc import collect
from commandcode.checkpoints.gc_roots import LiveRoots, live_root_ids
from commandcode.checkpoints.shell_tracking import ShellTracker
from commandcode.checkpoints.store import BackupStore, content_id
from commandcode.config.paths import objects_dir
from helpers.cli import cli_env


def _age(store: BackupStore, object_id: str, seconds: float) -> None:
    moment = time.time() - seconds
    os.utime(store.object_path(object_id), (moment, moment))


def test_a_baseline_object_is_kept_while_its_session_runs(home: Path, workdir: Path) -> None:
    store = BackupStore()
    (workdir / "old.txt").write_text("stored long ago by another session\n")
    object_id = store.put_bytes((workdir / "old.txt").read_bytes())
    tracker = ShellTracker(workdir, store)
    tracker.refresh()  # the baseline: the object, named by no record
    assert tracker.cache[str(workdir / "old.txt")].content_id == object_id
    _age(store, object_id, 3 * 3600)  # hours into the session
    report = collect()
    assert report.deleted == 0 and store.contains(object_id)
    assert object_id in live_root_ids(objects_dir())
    tracker.stop()  # the session ends: nothing counts on it any more
    assert live_root_ids(objects_dir()) == set() and not list((objects_dir() / "roots").glob("*.roots"))
    assert collect().deleted == 1 and not store.contains(object_id)


def test_the_roots_of_a_killed_process_are_dropped(home: Path, workdir: Path) -> None:
    store = BackupStore()
    object_id = store.put_bytes(b"counted on by a process that dies\n")
    _age(store, object_id, 3 * 3600)
    script = ("import sys, time; from pathlib import Path; from commandcode.checkpoints.gc_roots import LiveRoots; "
              "roots = LiveRoots(Path(sys.argv[1])); roots.add([sys.argv[2]]); print('ready', flush=True); time.sleep(600)")
    child = subprocess.Popen([sys.executable, "-c", script, str(objects_dir()), object_id], env=cli_env(home),
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        assert collect().deleted == 0 and store.contains(object_id)  # alive: kept
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=60)
    assert collect().deleted == 1 and not store.contains(object_id)
    assert not list((objects_dir() / "roots").glob("*.roots"))


def test_roots_files_are_written_once_per_id_and_ignore_junk(home: Path) -> None:
    store = BackupStore()
    roots = LiveRoots(store.root)
    first, second = content_id(b"a"), content_id(b"b")
    roots.add([first, first])
    roots.add([first, second])
    [path] = list((store.root / "roots").glob("*.roots"))
    assert path.read_text().splitlines() == [first, second]
    (store.root / "roots" / "junk.roots").write_text("not an id\n")  # nobody holds it: removed
    assert live_root_ids(store.root) == {first, second}
    assert not (store.root / "roots" / "junk.roots").exists()
    roots.close()
    assert not path.exists()
