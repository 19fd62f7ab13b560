"""The redo point is kept from the bytes the restore verified (`store/restore/keep.rs`): every
file a rewind replaces is an object of the store before anything is written, whichever way the
restore writes it (in place, or a new file for an executable or hard-linked one), a file that
changes between verification and keeping refuses the restore with nothing written, and a redo
gives back the exact bytes and modes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from commandcode.checkpoints import store as backups
from commandcode.checkpoints.gc import collect
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.records import read_checkpoints
from commandcode.checkpoints.rewind import RewindOptions, redo, rewind
from commandcode.checkpoints.rewind_code import plan_code
from commandcode.errors import RestoreError
from commandcode.sessions.files import SessionFiles
from helpers.checkpoints import new_session_files, snapshot, write


def _turn(project: Path) -> tuple[SessionFiles, dict[str, bytes]]:
    """One turn editing a plain file, an executable, a hard-linked file, and creating one."""
    write(project / "plain.txt", b"plain before\n", 0o644)
    write(project / "tool.sh", b"#!/bin/sh\necho before\n", 0o755)
    write(project / "linked.txt", b"linked before\n", 0o644)
    os.link(project / "linked.txt", project / "alias.txt")
    files = new_session_files(project)
    manager = CheckpointManager.for_session(files, project, compatible_backups=False)
    manager.open_checkpoint("edit", 0, None)
    edited = {"plain.txt": b"plain after\n", "tool.sh": b"#!/bin/sh\necho after\n",
              "linked.txt": b"linked after\n", "new.txt": b"made by the turn\n"}
    for name, data in edited.items():
        manager.backup_before_edit(str(project / name))
        with open(project / name, "r+b" if (project / name).exists() else "wb") as handle:  # keeps the hard link
            handle.truncate(0)
            handle.write(data)
        manager.record_after_edit(str(project / name))
    manager.flush()
    return files, edited


def test_the_redo_point_holds_every_replaced_file_as_a_stored_object(home: Path, project: Path) -> None:
    files, edited = _turn(project)
    after_turn = snapshot(project)
    store = backups.BackupStore()
    for name, data in edited.items():
        assert not store.contains(backups.content_id(data)), name  # only digests were recorded after the edits
    rewind(files, project, 1, RewindMode.CODE, RewindOptions(store=store))
    point = read_checkpoints(files.checkpoints)[-1]
    assert point.is_redo_point
    kept = {Path(item.path).name: item for item in point.files}
    assert set(kept) == set(edited)
    for name, data in edited.items():
        assert kept[name].hash == backups.content_id(data)
        assert store.read(kept[name].hash) == data  # durable objects, named by what verification hashed
    assert kept["tool.sh"].mode == 0o755
    assert (project / "alias.txt").read_bytes() == b"linked after\n"  # a hard-linked file gets a new file
    redo(files, project, RewindOptions(store=store))
    assert snapshot(project) == after_turn


def test_a_file_changed_after_verification_refuses_the_keep_and_nothing_is_written(home: Path,
                                                                                     project: Path) -> None:
    files, _ = _turn(project)
    store = backups.BackupStore()
    plan = plan_code(read_checkpoints(files.checkpoints), 0, project, files)
    before = snapshot(project)
    with backups.prepare_restore(store, plan.targets, session_id=files.session_id, confine_to=project) as prepared:
        assert not prepared.outcome.problems
        (project / "tool.sh").write_bytes(b"#!/bin/sh\necho changed meanwhile\n")  # not kept in memory: re-read
        with pytest.raises(OSError, match="changed while the restore was checking it"):
            prepared.keep()
    assert not store.contains(backups.content_id(b"#!/bin/sh\necho changed meanwhile\n"))
    assert {name: state for name, state in snapshot(project).items() if name != "tool.sh"} == \
        {name: state for name, state in before.items() if name != "tool.sh"}  # nothing restored
    assert not backups.journal_path(files.session_id).exists()


def test_a_prepared_restore_holds_the_lock_until_closed(home: Path, project: Path) -> None:
    files, _ = _turn(project)
    store = backups.BackupStore()
    plan = plan_code(read_checkpoints(files.checkpoints), 0, project, files)
    with backups.prepare_restore(store, plan.targets, session_id=files.session_id, confine_to=project):
        with pytest.raises(RestoreError):
            backups.prepare_restore(store, plan.targets, session_id=files.session_id, confine_to=project)
    with backups.prepare_restore(store, plan.targets, session_id=files.session_id, confine_to=project) as again:
        again.commit(force=False)
    assert (project / "plain.txt").read_bytes() == b"plain before\n"


def _compressible_turn(project: Path) -> tuple[SessionFiles, dict[str, bytes]]:
    """One turn editing three text files large enough that zstd shrinks them several times over."""
    files = new_session_files(project)
    for number in range(3):
        write(project / f"source{number}.py", f"def before_{number}():\n    return {number}\n".encode() * 400, 0o644)
    manager = CheckpointManager.for_session(files, project, compatible_backups=False)
    manager.open_checkpoint("edit", 0, None)
    edited = {}
    for number in range(3):
        path = project / f"source{number}.py"
        manager.backup_before_edit(str(path))
        edited[path.name] = f"def after_{number}():\n    return -{number}\n".encode() * 500
        path.write_bytes(edited[path.name])
        manager.record_after_edit(str(path))
    manager.flush()
    return files, edited


def test_the_redo_point_stores_its_objects_uncompressed_and_a_collection_compresses_them(home: Path,
                                                                                          project: Path) -> None:
    files, edited = _compressible_turn(project)
    after_turn = snapshot(project)
    store = backups.BackupStore()
    rewind(files, project, 1, RewindMode.CODE, RewindOptions(store=store))
    ids = {backups.content_id(data): data for data in edited.values()}
    sizes = store.packed_sizes()
    assert set(ids) <= set(sizes)
    for content_id, data in ids.items():  # stored frames: the redo reads them without decoding
        assert len(data) < sizes[content_id] <= len(data) + 32, (len(data), sizes[content_id])
    redo(files, project, RewindOptions(store=store))
    assert snapshot(project) == after_turn
    collect(grace_seconds=0)  # absorbs the pack, then sweeps what no record names
    assert not store.packed_sizes()
    for content_id, data in ids.items():  # kept (the redo point names them), loose and compressed now
        assert store.object_path(content_id).stat().st_size < len(data) // 4
        assert store.read(content_id) == data
    rewind(files, project, 1, RewindMode.CODE, RewindOptions(store=store))  # from the compressed objects
    redo(files, project, RewindOptions(store=store))
    assert snapshot(project) == after_turn


def test_a_redo_point_whose_objects_are_in_a_zstd_pack_still_redoes(home: Path, project: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A store written before redo points stored their objects uncompressed: its pack holds zstd
    frames, which the redo decodes (and verifies) as before."""
    files, edited = _compressible_turn(project)
    after_turn = snapshot(project)
    store = backups.BackupStore()
    monkeypatch.setattr(backups, "KEEP_LEVEL", 1)  # what the rewind of the old code wrote
    rewind(files, project, 1, RewindMode.CODE, RewindOptions(store=store))
    monkeypatch.undo()
    sizes = store.packed_sizes()
    for data in edited.values():
        assert sizes[backups.content_id(data)] < len(data) // 4, "compressed frames"
    redo(files, project, RewindOptions(store=store))
    assert snapshot(project) == after_turn
