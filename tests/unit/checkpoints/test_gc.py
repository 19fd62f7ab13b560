"""The object store's garbage collection: what is marked (checkpoints, restore journals, archive
refs), the grace period, a checkpoints file it cannot read, one collection at a time, a put that
races the sweep, and `commandcode doctor --gc [--dry-run]`."""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from pathlib import Path

import pytest

from commandcode.checkpoints.gc import RUN_LOCK_NAME, collect
from commandcode.checkpoints.store import GC_LOCK_NAME, BackupStore
from commandcode.errors import CheckpointError, CommandcodeError
from helpers.cli import assert_error_lines, run_cli, run_json

HOUR = 3600


def _age(store: BackupStore, object_id: str, seconds: float = 2 * HOUR) -> None:
    moment = time.time() - seconds
    os.utime(store.object_path(object_id), (moment, moment))


def _session_with_backup(home: Path, workdir: Path) -> str:
    """A real session whose edit backed up `a.txt` (one referenced object); returns its id."""
    (workdir / "a.txt").write_text("version one\n")
    result = run_json(["-p", 'call write_file {"file_path": "a.txt", "content": "two\\n"}', "--output-format", "json"],
                      workdir, home)
    return str(result["session_id"])


def _referenced(home: Path) -> set[str]:
    """The store objects the sessions' checkpoints name (a compatible backup's in its `blake3` key)."""
    from commandcode.checkpoints.records import read_checkpoints

    found: set[str] = set()
    for path in (home / "projects").rglob("*.checkpoints.jsonl"):
        found |= {item.store_object for record in read_checkpoints(path) for item in record.files if item.store_object}
    return found


def test_only_old_unreferenced_objects_go(home: Path, workdir: Path) -> None:
    _session_with_backup(home, workdir)
    store = BackupStore()
    referenced = _referenced(home)
    assert len(referenced) == 1
    old_garbage, young_garbage = store.put_bytes(b"old garbage"), store.put_bytes(b"young garbage")
    for object_id in [*referenced, old_garbage]:
        _age(store, object_id)
    dry = collect(dry_run=True)
    assert (dry.deleted, dry.young) == (1, 1) and store.contains(old_garbage)
    report = collect()
    assert report.deleted == 1 and report.deleted_ids == [old_garbage]
    assert not store.contains(old_garbage) and store.contains(young_garbage)
    assert all(store.contains(object_id) for object_id in referenced)
    store.read(next(iter(referenced)))  # still whole


def test_journals_and_archive_refs_are_marked(home: Path) -> None:
    store = BackupStore()
    in_journal, in_archive = store.put_bytes(b"journal source"), store.put_bytes(b"archived elsewhere")
    for object_id in (in_journal, in_archive):
        _age(store, object_id)
    (home / "journals").mkdir()
    (home / "journals" / "s.json").write_text(json.dumps({"ops": [{"source": {"object": in_journal}}]}))
    (home / "archives" / "proj").mkdir(parents=True)
    (home / "archives" / "proj" / "s2.ccarchive.refs").write_text(in_archive + "\n")
    assert collect().deleted == 0
    assert store.contains(in_journal) and store.contains(in_archive)


def test_an_unreadable_checkpoints_file_stops_the_collection(home: Path) -> None:
    store = BackupStore()
    garbage = store.put_bytes(b"garbage")
    _age(store, garbage)
    folder = home / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / "s.checkpoints.jsonl").mkdir()  # a folder where a file goes: unreadable
    with pytest.raises(CheckpointError):
        collect()
    assert store.contains(garbage)


def test_one_collection_at_a_time(home: Path) -> None:
    store = BackupStore()
    store.put_bytes(b"x")
    descriptor = os.open(store.root / RUN_LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        with pytest.raises(CommandcodeError, match="another garbage collection"):
            collect()
    finally:
        os.close(descriptor)


def test_a_put_waits_for_a_batch_and_its_object_survives(home: Path) -> None:
    """A sweep holds gc.lock while it judges and unlinks; a put of the same content waits, then
    finds the object gone and writes it again (never "exists" and then lost)."""
    store = BackupStore()
    object_id = store.put_bytes(b"shared content")
    _age(store, object_id)
    descriptor = os.open(store.root / GC_LOCK_NAME, os.O_RDWR)
    fcntl.flock(descriptor, fcntl.LOCK_EX)  # as the sweep does around a batch
    done = threading.Event()

    def put() -> None:
        BackupStore().put_bytes(b"shared content")
        done.set()

    worker = threading.Thread(target=put)
    worker.start()
    assert not done.wait(0.3), "a put must wait while a sweep batch holds the lock"
    os.unlink(store.object_path(object_id))  # the sweep's unlink, inside its batch
    fcntl.flock(descriptor, fcntl.LOCK_UN)
    os.close(descriptor)
    worker.join(timeout=30)
    assert done.is_set() and store.contains(object_id)
    assert store.read(object_id) == b"shared content"


def test_a_refreshed_object_is_young_again(home: Path) -> None:
    store = BackupStore()
    object_id = store.put_bytes(b"re-put")
    _age(store, object_id)
    store.put_bytes(b"re-put")  # a re-put refreshes the mtime
    assert collect().deleted == 0 and store.contains(object_id)


def test_doctor_gc_cli(home: Path, workdir: Path) -> None:
    _session_with_backup(home, workdir)
    store = BackupStore()
    garbage = store.put_bytes(b"garbage")
    _age(store, garbage)
    dry = run_json(["doctor", "--gc", "--dry-run", "--json"], workdir, home)
    assert dry["deleted_objects"] == 1 and dry["dry_run"] and store.contains(garbage)
    text = run_cli(["doctor", "--gc"], workdir, home)
    assert text.returncode == 0 and "removed 1 unreferenced object" in text.stdout
    assert not store.contains(garbage)
    assert_error_lines(run_cli(["doctor"], workdir, home), error_contains="nothing to do", exit_code=2)


def test_a_planted_lock_stops_the_collection_but_not_backups(home: Path, tmp_path: Path) -> None:
    store = BackupStore()
    garbage = store.put_bytes(b"garbage")
    _age(store, garbage)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("not a lock")
    (store.root / GC_LOCK_NAME).unlink(missing_ok=True)
    (store.root / GC_LOCK_NAME).symlink_to(elsewhere)
    with pytest.raises(CommandcodeError, match="cannot lock the object store"):
        collect()
    assert store.contains(garbage) and elsewhere.read_text() == "not a lock"
    fresh = BackupStore()
    assert fresh.read(fresh.put_bytes(b"backups still work")) == b"backups still work"


def test_a_digest_in_any_session_sidecar_is_marked(home: Path) -> None:
    """Redo points, or a record kind today's parser skips, keep their objects."""
    store = BackupStore()
    in_redo, in_transcript = store.put_bytes(b"redo point"), store.put_bytes(b"named in a transcript only")
    for object_id in (in_redo, in_transcript):
        _age(store, object_id)
    folder = home / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / "s.redo.jsonl").write_text(json.dumps({"kind": "redo", "files": [{"blob": in_redo}]}) + "\n")
    (folder / "s.jsonl").write_text(json.dumps({"type": "session", "note": in_transcript}) + "\n")
    report = collect()
    assert store.contains(in_redo)
    assert report.deleted_ids == [in_transcript]  # transcripts are not sidecars: not scanned
