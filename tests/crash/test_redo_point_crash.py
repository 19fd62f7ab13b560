"""Crash test: a rewind killed with SIGKILL while it stores its redo point's objects (one
batched flush: temps, a `syncfs`, renames, a second `syncfs`; `store/batch.rs`).

A kill there lands before the restore's journal exists: the project must be exactly as before
the rewind, the checkpoints file unchanged, every object in the store whole (it decompresses and
hashes to its name), and the next rewind must succeed with a redo point whose redo gives back
every edited byte. The temps a kill leaves are swept by the collection."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import commandcode
from commandcode.checkpoints import store as backups
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.records import read_checkpoints, write_checkpoints
from commandcode.checkpoints.rewind import RewindOptions, redo, rewind
from helpers.checkpoints import snapshot
from helpers.crash_rewind import REWIND_SCRIPT, child_environment, prepare

PAUSE_MS = 120



def _make_edits_new(files: object, project: Path, attempt: int) -> None:
    """Gives every file the turn left new bytes (and the records their after-digests), so this
    attempt's redo point has new objects to store even in a store earlier attempts filled."""
    parsed = read_checkpoints(files.checkpoints)  # type: ignore[attr-defined]
    for record in parsed:
        for item in record.files:
            path = project / item.path if not os.path.isabs(item.path) else Path(item.path)
            if item.after_hash is not None and path.is_file():
                data = path.read_bytes() + f"attempt {attempt}\n".encode()
                path.write_bytes(data)
                item.after_hash = backups.content_id(data)
    write_checkpoints(files.checkpoints, parsed)  # type: ignore[attr-defined]


def _temps(store: Path) -> list[Path]:
    return [path for path in store.rglob("*.cctmp")]


def _objects(store: Path) -> list[str]:
    return [path.parent.name + path.name for path in store.glob("??/*") if len(path.name) == 62]


@pytest.mark.slow
def test_kill_9_while_the_redo_point_is_stored_loses_nothing(home: Path, tmp_path: Path) -> None:
    rng = random.Random(20261205)
    environment = child_environment(home)
    store_root = home / "objects"
    landed = set()
    for attempt in range(8):
        project = tmp_path / f"project{attempt}"
        project.mkdir()
        files, restored_state, _ = prepare(project)
        _make_edits_new(files, project, attempt)
        edited_state = snapshot(project)
        records = files.checkpoints.read_bytes()  # type: ignore[attr-defined]
        process = subprocess.Popen(
            [sys.executable, "-c", REWIND_SCRIPT, str(files.directory), files.session_id, str(project),  # type: ignore[attr-defined]
             "keep_pause_ms", str(PAUSE_MS)],
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.05, 0.6))
        process.send_signal(signal.SIGKILL)
        process.wait()
        temps = _temps(store_root)
        journal = home / "journals" / f"{files.session_id}.json"  # type: ignore[attr-defined]
        if journal.exists() or snapshot(project) != edited_state:
            landed.add("restore")  # past the redo point: the restore crash tests' business
            continue
        landed.add("temps" if temps else "flush")
        assert files.checkpoints.read_bytes() == records, f"attempt {attempt}: records changed"  # type: ignore[attr-defined]
        store = backups.BackupStore(store_root)
        for name in _objects(store_root):
            store.verify(name)  # a kill never leaves a torn object under its name
        # the next rewind works and keeps every edited byte for its redo
        rewind(files, project, 1, RewindMode.CODE, RewindOptions())  # type: ignore[arg-type]
        assert snapshot(project) == restored_state
        redo(files, project, RewindOptions())  # type: ignore[arg-type]
        assert snapshot(project) == edited_state, f"attempt {attempt}: the redo lost edits"
        if temps:
            assert store.sweep(_objects(store_root), grace_seconds=0)["removed_temporaries"] >= len(temps)
            assert not _temps(store_root)
    assert "temps" in landed, f"no kill landed inside the flush: {landed}"
