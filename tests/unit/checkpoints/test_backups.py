"""The backup store facade (`commandcode.checkpoints.store`): objects, sweeps, and verified all-or-nothing
restores. Every refusal checks that nothing was written."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from commandcode.checkpoints import store as backups
from commandcode.checkpoints.store import BackupStore, RestoreTarget
from commandcode.errors import BackupIntegrityError, ChangedOutsideError, RestoreError, UnsupportedFormatError
from helpers.checkpoints import read_only_tmpfs, small_tmpfs, snapshot, write

SESSION = "00000000-0000-4000-8000-000000000001"


def restore(store: BackupStore, targets: list[RestoreTarget], project: Path, **options: object) -> backups.RestoreOutcome:
    return backups.restore_files(store, targets, session_id=SESSION, confine_to=project, **options)  # type: ignore[arg-type]


def test_objects_are_compressed_fanned_out_deduplicated_and_read_only(home: Path, project: Path) -> None:
    store = BackupStore()
    assert store.root == home / "objects"
    data = b"def handler():\n    return 42\n" * 200
    source = write(project / "a.py", data, 0o640)
    first = store.backup_file(source)
    assert (first.kind, first.size, first.mode, first.stored_now) == ("regular", len(data), 0o640, True)
    assert first.content_id == backups.content_id(data)
    path = store.object_path(first.content_id)
    assert path.parent.name == first.content_id[:2] and path.name == first.content_id[2:]
    assert path.stat().st_size < len(data) / 4
    assert path.stat().st_mode & 0o777 == 0o400
    assert store.read(first.content_id) == data
    copy = write(project / "copy.py", data)
    assert store.backup_file(copy).stored_now is False
    assert store.usage()[0] == 1


def test_symlinks_missing_files_and_large_files_are_not_stored(home: Path, project: Path) -> None:
    store = BackupStore()
    real = write(project / "real.txt", b"x")
    (project / "link.txt").symlink_to(real)
    assert store.backup_file(project / "link.txt").kind == "symlink"
    assert store.backup_file(project / "absent.txt").kind == "missing"
    big = project / "big.bin"
    with open(big, "wb") as handle:
        handle.truncate(backups.MAX_BACKUP_SIZE + 1)
    assert store.backup_file(big).kind == "too_large"
    assert store.usage() == (0, 0)


def test_integrity_errors_name_the_object(home: Path) -> None:
    store = BackupStore()
    content_id = store.put_bytes(b"payload")
    path = store.object_path(content_id)
    path.chmod(0o600)
    path.write_bytes(b"garbage")
    with pytest.raises(BackupIntegrityError, match=content_id):
        store.verify(content_id)
    path.unlink()
    with pytest.raises(BackupIntegrityError, match="missing"):
        store.read(content_id)


def test_unknown_store_version_is_refused(home: Path) -> None:
    BackupStore()
    (home / "objects" / "config").write_text('{"version": 2}')
    with pytest.raises(UnsupportedFormatError):
        BackupStore()


def test_sweep_deletes_only_unreferenced_old_objects(home: Path) -> None:
    store = BackupStore()
    kept = store.put_bytes(b"kept")
    dropped = store.put_bytes(b"dropped")
    report = store.sweep([kept], grace_seconds=3600)
    assert report["deleted_objects"] == 0 and report["kept_young"] == 1
    report = store.sweep([kept], grace_seconds=0)
    assert report["deleted_objects"] == 1
    assert store.contains(kept) and not store.contains(dropped)


def test_restore_puts_back_modified_deleted_and_created_files(home: Path, project: Path) -> None:
    store = BackupStore()
    old_binary = bytes(range(256)) * 3
    modified = write(project / "src/app.py", b"new version\r\n", 0o644)
    created = write(project / "created.txt", b"made after the checkpoint")
    targets = [
        RestoreTarget(modified, store.put_bytes(b"old version\r\n"), mode=0o755),
        RestoreTarget(created, None),
        RestoreTarget(project / "assets/logo.bin", store.put_bytes(old_binary), mode=0o600),
    ]
    outcome = restore(store, targets, project)
    assert [change.action for change in outcome.changes] == ["write", "delete", "write"]
    assert snapshot(project) == {
        "assets/logo.bin": ("file", old_binary, 0o600),
        "src/app.py": ("file", b"old version\r\n", 0o755),
    }
    assert not backups.journal_path(SESSION).exists()


def test_restore_from_a_real_cli_sha256_blob(home: Path, project: Path) -> None:
    blobs = home / "file-history" / SESSION
    blobs.mkdir(parents=True)
    digest = hashlib.sha256(b"base\n").hexdigest()
    (blobs / digest).write_bytes(b"base\n")
    target = write(project / "existing.txt", b"version two\n")
    restore(BackupStore(), [RestoreTarget(target, digest, algorithm="sha256", blob_folder=blobs)], project)
    assert target.read_bytes() == b"base\n"


@pytest.mark.parametrize(
    "case",
    ["outside_dot_dot", "outside_absolute", "outside_via_symlinked_folder", "missing", "corrupt", "symlink", "changed"],
)
def test_every_refusal_writes_nothing(home: Path, project: Path, tmp_path: Path, case: str) -> None:
    store = BackupStore()
    write(project / "keep.txt", b"current")
    outside = tmp_path / "outside"
    outside.mkdir()
    write(outside / "x", b"outside file")
    good = RestoreTarget(project / "keep.txt", store.put_bytes(b"older"))
    if case == "outside_dot_dot":
        bad = RestoreTarget(Path(f"{project}/../outside/x"), store.put_bytes(b"evil"))
        expected_error: type[Exception] = RestoreError
    elif case == "outside_absolute":
        bad = RestoreTarget(Path("/etc/commandcode-test-x"), store.put_bytes(b"evil"))
        expected_error = RestoreError
    elif case == "outside_via_symlinked_folder":
        (project / "escape").symlink_to(outside)
        bad = RestoreTarget(project / "escape/x", store.put_bytes(b"evil"))
        expected_error = RestoreError
    elif case == "missing":
        bad = RestoreTarget(project / "new.txt", backups.content_id(b"never stored"))
        expected_error = BackupIntegrityError
    elif case == "corrupt":
        content_id = store.put_bytes(b"will be corrupted")
        store.object_path(content_id).chmod(0o600)
        store.object_path(content_id).write_bytes(b"\x28\xb5\x2f\xfd broken")
        bad = RestoreTarget(project / "new.txt", content_id)
        expected_error = BackupIntegrityError
    elif case == "symlink":
        (project / "link.txt").symlink_to(outside / "x")
        bad = RestoreTarget(project / "link.txt", store.put_bytes(b"through the link"))
        expected_error = RestoreError
    else:
        write(project / "edited.txt", b"edited in vim")
        bad = RestoreTarget(project / "edited.txt", store.put_bytes(b"older"), expected=backups.content_id(b"tool output"))
        expected_error = ChangedOutsideError
    before_project, before_outside = snapshot(project), snapshot(outside)
    with pytest.raises(expected_error) as raised:
        restore(store, [good, bad], project)
    assert snapshot(project) == before_project
    assert snapshot(outside) == before_outside
    assert not Path("/etc/commandcode-test-x").exists()
    problems = raised.value.problems
    assert len(problems) == 1 and Path(problems[0][0]).name == bad.path.name
    assert bad.path.name in str(raised.value)


def test_refusal_names_every_failing_file(home: Path, project: Path) -> None:
    store = BackupStore()
    targets = [RestoreTarget(project / f"f{index}.txt", backups.content_id(f"{index}".encode())) for index in range(3)]
    with pytest.raises(BackupIntegrityError) as raised:
        restore(store, targets, project)
    message = str(raised.value)
    assert all(f"f{index}.txt" in message for index in range(3))
    assert snapshot(project) == {}


def test_allow_outside_lifts_confinement(home: Path, project: Path, tmp_path: Path) -> None:
    store = BackupStore()
    outside = write(tmp_path / "elsewhere/x.txt", b"now")
    backups.restore_files(store, [RestoreTarget(outside, store.put_bytes(b"then"))], session_id=SESSION, confine_to=None)
    assert outside.read_bytes() == b"then"


def test_force_overwrites_changed_files(home: Path, project: Path) -> None:
    store = BackupStore()
    target = write(project / "a.txt", b"hand edit")
    item = RestoreTarget(target, store.put_bytes(b"original"), expected=backups.content_id(b"tool wrote this"))
    plan = backups.check_restore(store, [item], confine_to=project)
    assert plan.problems[0].code == "changed_outside" and plan.changes[0].changed_outside
    restore(store, [item], project, force=True)
    assert target.read_bytes() == b"original"


@pytest.mark.parametrize("fail_before_step", [0, 1, 2, 3])
def test_a_failure_midway_puts_back_the_files_already_written(home: Path, project: Path, fail_before_step: int) -> None:
    store = BackupStore()
    write(project / "a.txt", b"a now")
    write(project / "b.txt", b"b now")
    write(project / "c.txt", b"c now")
    targets = [
        RestoreTarget(project / "a.txt", store.put_bytes(b"a then")),
        RestoreTarget(project / "b.txt", None),
        RestoreTarget(project / "new/d.txt", store.put_bytes(b"d then")),
        RestoreTarget(project / "c.txt", store.put_bytes(b"c then"), mode=0o700),
    ]
    before = snapshot(project)
    with pytest.raises(RestoreError, match="put back"):
        restore(store, targets, project, fail_before_step=fail_before_step)
    assert snapshot(project) == before
    assert not (project / "new").exists()


@pytest.mark.parametrize("in_place", [True, False])
def test_both_methods_give_the_same_bytes_and_modes_and_only_in_place_keeps_the_inode(home: Path, project: Path, in_place: bool) -> None:
    store = BackupStore()
    write(project / "a.txt", b"a now, longer than it was", 0o644)
    inode = (project / "a.txt").stat().st_ino
    backups.restore_files(store, [RestoreTarget(project / "a.txt", store.put_bytes(b"a then"), mode=0o600)],
                          session_id=SESSION, confine_to=project, in_place=in_place)
    assert snapshot(project) == {"a.txt": ("file", b"a then", 0o600)}
    assert ((project / "a.txt").stat().st_ino == inode) is in_place


def test_disk_full_while_staging_on_a_real_small_filesystem(home: Path, tmp_path: Path) -> None:
    store = BackupStore()
    with small_tmpfs(tmp_path / "small", "1m") as mount:
        write(mount / "keep.txt", b"small file")
        write(mount / "filler.bin", os.urandom(700 * 1024))
        big = os.urandom(600 * 1024)
        targets = [RestoreTarget(mount / "keep.txt", store.put_bytes(b"older")), RestoreTarget(mount / "big.bin", store.put_bytes(big))]
        before = snapshot(mount)
        with pytest.raises(RestoreError, match=r"big\.bin.*No space left on device.*put back"):
            backups.restore_files(store, targets, session_id=SESSION, confine_to=mount)
        assert snapshot(mount) == before


def test_disk_full_while_a_file_grows_in_place_puts_every_file_back(home: Path, tmp_path: Path) -> None:
    """Existing files are overwritten in place; one that grows past the free space fails halfway
    through its write, and the undo puts back its bytes and those already rewritten."""
    store = BackupStore()
    with small_tmpfs(tmp_path / "small", "1m") as mount:
        write(mount / "first.txt", b"first, as it is now")
        write(mount / "grow.txt", b"a small file that a restore makes big")
        write(mount / "filler.bin", os.urandom(700 * 1024))
        inode = (mount / "first.txt").stat().st_ino
        targets = [
            RestoreTarget(mount / "first.txt", store.put_bytes(b"first, as it was")),
            RestoreTarget(mount / "grow.txt", store.put_bytes(os.urandom(600 * 1024))),
        ]
        before = snapshot(mount)
        with pytest.raises(RestoreError, match=r"grow\.txt.*No space left on device.*put back"):
            backups.restore_files(store, targets, session_id=SESSION, confine_to=mount)
        assert snapshot(mount) == before
        assert (mount / "first.txt").stat().st_ino == inode


def test_read_only_target_is_refused_before_anything_is_written(home: Path, tmp_path: Path) -> None:
    store = BackupStore()
    with read_only_tmpfs(tmp_path / "ro", {"locked.txt": b"read only"}) as mount:
        writable = write(tmp_path / "writable.txt", b"now")
        targets = [RestoreTarget(writable, store.put_bytes(b"then")), RestoreTarget(mount / "locked.txt", store.put_bytes(b"x"))]
        with pytest.raises(RestoreError, match="locked.txt"):
            backups.restore_files(store, targets, session_id=SESSION, confine_to=None)
        assert writable.read_bytes() == b"now"
        assert (mount / "locked.txt").read_bytes() == b"read only"


def test_immutable_target_is_refused(home: Path, project: Path) -> None:
    store = BackupStore()
    target = write(project / "immutable.txt", b"pinned")
    if subprocess.run(["chattr", "+i", str(target)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not supported on this file system")
    try:
        with pytest.raises(RestoreError, match="immutable"):
            restore(store, [RestoreTarget(target, store.put_bytes(b"older"))], project)
        assert target.read_bytes() == b"pinned"
    finally:
        subprocess.run(["chattr", "-i", str(target)], check=False)


def _recover(home: Path) -> tuple[str, list[Path]] | None:
    """Recovery of SESSION's pending restore, confined to `home`'s project folder."""
    from commandcode.sessions.files import SessionFiles

    return backups.recover_pending(SessionFiles(home / "projects" / "p", SESSION), home / "project")


def test_recover_pending_is_a_no_op_without_a_journal(home: Path) -> None:
    assert _recover(home) is None


def test_a_restore_in_progress_elsewhere_is_reported(home: Path) -> None:
    import fcntl

    journal = backups.journal_path(SESSION)
    journal.parent.mkdir(parents=True)
    journal.write_text('{"version":1,"state":"open","createdDirs":[],"ops":[]}')
    with open(f"{journal}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with pytest.raises(RestoreError, match="another restore is running"):
            _recover(home)
    assert _recover(home) == ("rolled_back", [])
    assert not journal.exists()


def test_an_unreadable_journal_is_kept_and_reported(home: Path) -> None:
    journal = backups.journal_path(SESSION)
    journal.parent.mkdir(parents=True)
    journal.write_text("{not json")
    with pytest.raises(RestoreError, match="unreadable restore journal"):
        _recover(home)
    assert journal.read_text() == "{not json"
