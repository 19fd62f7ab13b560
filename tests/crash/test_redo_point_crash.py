"""Crash test: a rewind killed with SIGKILL while it stores its redo point's objects (one pack:
compressed in memory, then a temp in `objects/packs/`, an fsync, a rename, a folder fsync;
`store/packs.rs`), and a collection killed while it absorbs packs (their objects written loose by
one batched flush, then each pack deleted).

A kill in the redo point lands before the restore's journal exists: the project must be exactly as
before the rewind, the checkpoints file unchanged, every object in the store whole (loose or packed,
it decompresses and hashes to its name), and the next rewind must succeed with a redo point whose
redo gives back every edited byte. A kill in an absorb leaves every object readable, loose or still
in its pack, and the next absorb finishes. The temps a kill leaves are swept."""

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


def _packs(store: Path) -> list[Path]:
    return sorted((store / "packs").glob("*.pack"))


def _age(paths: list[Path]) -> None:
    old = time.time() - 3600
    for path in paths:
        os.utime(path, (old, old))


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
        packs_before = len(_packs(store_root))
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
        landed.add("temp" if temps else "pack" if len(_packs(store_root)) > packs_before else "before")
        assert files.checkpoints.read_bytes() == records, f"attempt {attempt}: records changed"  # type: ignore[attr-defined]
        store = backups.BackupStore(store_root)
        for name in [*_objects(store_root), *store.packed_ids()]:
            store.verify(name)  # a kill never leaves a torn object under its name, nor a torn pack
        # the next rewind works and keeps every edited byte for its redo
        rewind(files, project, 1, RewindMode.CODE, RewindOptions())  # type: ignore[arg-type]
        assert snapshot(project) == restored_state
        redo(files, project, RewindOptions())  # type: ignore[arg-type]
        assert snapshot(project) == edited_state, f"attempt {attempt}: the redo lost edits"
        if temps:
            _age(temps)
            assert store.absorb_packs()["removed_temporaries"] >= len(temps)
            assert not _temps(store_root)
    assert {"before", "pack"} <= landed, f"no kill landed before or after the pack's write: {landed}"


ABSORB_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from commandcode.checkpoints.store import BackupStore
    store = BackupStore(Path(sys.argv[1]))
    print("ready", flush=True)
    store.absorb_packs(pause_ms=int(sys.argv[2]))
    print("done", flush=True)
    """
)


def _packed_store(store_root: Path, packs: int, rng: random.Random) -> dict[str, bytes]:
    """A store whose objects are in `packs` packs, written as redo points write them; returns
    every object's bytes by id."""
    from commandcode import _native

    wanted: dict[str, bytes] = {}
    store = backups.BackupStore(store_root)
    for pack in range(packs):
        project = store_root.parent / f"source{pack}"
        project.mkdir()
        targets = []
        for index in range(60):
            data = f"pack {pack} object {index} {rng.random()}\n".encode() * (index + 1)
            path = project / f"file{index}.txt"
            path.write_bytes(data)
            wanted[backups.content_id(data)] = data
            targets.append(_native.RestoreItem(str(path)))  # a restore that deletes it: it keeps it first
        prepared = _native.prepare_restore(store._native, targets, str(store_root.parent / f"journal{pack}.json"),
                                           confine_to=None, protected=[], in_place=True)
        # stored frames (a redo point's now, compressed as they are absorbed) and zstd ones (a store
        # the code before them wrote)
        prepared.keep(store._native, backups.MAX_BACKUP_SIZE, level=None if pack % 2 else 1, pause_ms=0)
        prepared.close()
    assert len(_packs(store_root)) == packs and not _objects(store_root)
    return wanted


@pytest.mark.slow
def test_kill_9_while_packs_are_absorbed_loses_no_object(tmp_path: Path) -> None:
    rng = random.Random(20261206)
    landed = set()
    for attempt in range(6):
        store_root = tmp_path / f"attempt{attempt}" / "objects"
        store_root.parent.mkdir()
        wanted = _packed_store(store_root, 3, rng)
        process = subprocess.Popen([sys.executable, "-c", ABSORB_SCRIPT, str(store_root), "80"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.0, 0.35))
        process.send_signal(signal.SIGKILL)
        process.wait()
        packs, loose = len(_packs(store_root)), len(_objects(store_root))
        landed.add("packs left" if packs else "all absorbed")
        store = backups.BackupStore(store_root)
        for content_id, data in wanted.items():
            assert store.read(content_id) == data, f"attempt {attempt}: lost {content_id[:12]} ({packs} packs, {loose} loose)"
        _age(_temps(store_root))
        store.absorb_packs()
        store.sweep(list(wanted), grace_seconds=0)  # a collection's sweep: the loose temps a kill left
        assert not _packs(store_root) and not _temps(store_root)
        assert sorted(_objects(store_root)) == sorted(wanted)
        fresh = backups.BackupStore(store_root)
        assert all(fresh.read(content_id) == data for content_id, data in wanted.items())
    assert "packs left" in landed, landed
