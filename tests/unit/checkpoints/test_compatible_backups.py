"""`checkpoints.compatibleBackups` (default on): a backup is also the real CLI's raw sha256 blob in
`file-history/<sid>/`, a hard link to one shared copy per content; off: only our store."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from commandcode.checkpoints import compatible
from commandcode.checkpoints import store as backups
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.references import referenced_objects, sweep_objects
from commandcode.config.paths import file_history_dir
from helpers.checkpoints import new_session_files, write
from helpers.cli import run_cli, run_ok


def _backed_up(project: Path, name: str, data: bytes) -> tuple[CheckpointManager, dict]:
    manager = CheckpointManager.for_session(new_session_files(project), project)
    manager.open_checkpoint("edit", 0, None)
    target = write(project / name, data)
    assert manager.backup_before_edit(str(target)) == []
    manager.flush()
    [record] = [json.loads(line) for line in manager.files.checkpoints.read_text().split("\n")]
    return manager, record["files"][0]


def test_by_default_a_backup_is_also_the_real_clis_raw_blob(home: Path, project: Path) -> None:
    data = b"before the edit\n"
    manager, item = _backed_up(project, "a.txt", data)
    digest = hashlib.sha256(data).hexdigest()
    assert item["hash"] == digest and "algo" not in item  # the real CLI's own item shape
    assert item["blake3"] == backups.content_id(data) and manager.store.read(item["blake3"]) == data
    blob = file_history_dir(manager.files.session_id) / digest
    assert blob.read_bytes() == data
    shared = compatible.raw_objects_dir() / digest[:2] / digest
    assert os.stat(blob).st_ino == os.stat(shared).st_ino and os.stat(shared).st_nlink == 2


def test_n_sessions_with_the_same_content_share_one_raw_copy(home: Path, project: Path) -> None:
    data = b"shared content\n" * 100
    inodes = set()
    for index in range(3):
        manager, item = _backed_up(project, f"f{index}.txt", data)
        inodes.add(os.stat(file_history_dir(manager.files.session_id) / item["hash"]).st_ino)
    digest = hashlib.sha256(data).hexdigest()
    assert len(inodes) == 1
    assert os.stat(compatible.raw_objects_dir() / digest[:2] / digest).st_nlink == 4  # 3 sessions + the copy


def test_off_writes_only_our_store(home: Path, project: Path) -> None:
    home.mkdir()
    (home / "settings.json").write_text('{"checkpoints": {"compatibleBackups": false}}')
    manager, item = _backed_up(project, "a.txt", b"x")
    assert item["algo"] == "blake3" and "blake3" not in item
    assert not file_history_dir(manager.files.session_id).exists()
    assert not compatible.raw_objects_dir().exists()


def test_the_sweep_keeps_the_object_and_drops_unlinked_raw_copies(home: Path, project: Path) -> None:
    data = b"sweep me\n"
    manager, item = _backed_up(project, "a.txt", data)
    assert item["blake3"] in referenced_objects(store_root=manager.store.root)
    sweep_objects(manager.store, grace_seconds=0)
    shared = compatible.raw_objects_dir() / item["hash"][:2] / item["hash"]
    assert shared.exists() and manager.store.contains(item["blake3"])  # still linked and referenced
    (file_history_dir(manager.files.session_id) / item["hash"]).unlink()  # the real CLI pruned it
    sweep_objects(manager.store, grace_seconds=0)
    assert not shared.exists()


def test_our_rewind_restores_from_the_compatible_blob(home: Path, project: Path) -> None:
    (project / "a.txt").write_text("one\n")
    run_ok(["-p", 'call write_file {"file_path": "a.txt", "content": "two\\n"}'], project, home)
    run_ok(["-c", "-p", "hello"], project, home)
    [transcript] = [path for path in (home / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name]
    record = json.loads(transcript.with_name(transcript.stem + ".checkpoints.jsonl").read_text().split("\n")[0])
    assert record["files"][0]["hash"] == hashlib.sha256(b"one\n").hexdigest()
    done = run_cli(["rewind", transcript.stem, "--to", "1", "--mode", "code", "--yes"], project, home)
    assert done.returncode == 0, done.stderr
    assert (project / "a.txt").read_text() == "one\n"


def test_a_pruned_raw_blob_is_restored_from_our_store(home: Path, project: Path) -> None:
    """The real CLI prunes `file-history/<sid>/` with its old sessions; our copy still restores."""
    import shutil

    (project / "a.txt").write_text("one\n")
    run_ok(["-p", 'call write_file {"file_path": "a.txt", "content": "two\\n"}'], project, home)
    [transcript] = [path for path in (home / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name]
    shutil.rmtree(home / "file-history" / transcript.stem)
    done = run_cli(["rewind", transcript.stem, "--to", "1", "--mode", "code", "--yes"], project, home)
    assert done.returncode == 0, done.stderr
    assert (project / "a.txt").read_text() == "one\n"


def test_blob_names_answers_as_isfile_before_and_after_it_lists_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "blobs"
    folder.mkdir()
    names = [hashlib.sha256(str(number).encode()).hexdigest() for number in range(60)]
    for name in names[:30]:
        (folder / name).write_bytes(b"blob")
    (folder / names[30]).mkdir()  # a folder with a blob's name is no blob
    os.symlink(folder / names[0], folder / names[31])  # a link to a blob counts, as isfile says
    os.symlink(tmp_path / "gone", folder / names[32])  # a dangling one does not
    blobs = compatible.BlobNames(folder)
    asked = names * 2  # past LISTED_AFTER: the later answers come from one listing
    assert len(asked) > compatible.BlobNames.LISTED_AFTER
    assert [blobs.has(name) for name in asked] == [os.path.isfile(folder / name) for name in asked]
    assert blobs._names is not None
    assert not compatible.BlobNames(tmp_path / "missing").has(names[0])


def _many_backed_up(project: Path, count: int) -> CheckpointManager:
    """A session whose one checkpoint backed up `count` files (past `BlobNames.LISTED_AFTER`)."""
    manager = CheckpointManager.for_session(new_session_files(project), project)
    manager.open_checkpoint("edit", 0, None)
    for number in range(count):
        target = write(project / f"f{number}.txt", f"before {number}\n".encode())
        assert manager.backup_before_edit(str(target)) == []
        target.write_text(f"after {number}\n")
        manager.record_after_edit(str(target))
    manager.flush()
    return manager


def test_a_rewind_lists_the_blob_folder_once(home: Path, project: Path, monkeypatch: Any) -> None:
    """The backup rule (`blob_rule.enforce`) and the restore's plan ask of every blob: they share
    one listing of `file-history/<sid>/`, not one each."""
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.rewind import rewind

    manager = _many_backed_up(project, 2 * compatible.BlobNames.LISTED_AFTER)
    listed: list[str] = []
    original = compatible.BlobNames._list

    def counted(self: compatible.BlobNames) -> set[str]:
        listed.append(self.folder)
        return original(self)

    monkeypatch.setattr(compatible.BlobNames, "_list", counted)
    result = rewind(manager.files, project, 1, RewindMode.CODE)
    assert len(result.written) == 2 * compatible.BlobNames.LISTED_AFTER
    assert (project / "f0.txt").read_text() == "before 0\n"
    assert listed == [os.fspath(file_history_dir(manager.files.session_id))]


def test_blob_names_hear_of_the_blobs_the_rule_writes_after_the_listing(home: Path, project: Path) -> None:
    """A blob the rule makes again (the real CLI pruned it) is known to the shared listing, so
    the plan restores from it as from any other blob."""
    from commandcode.checkpoints.blob_rule import enforce
    from commandcode.checkpoints.records import read_checkpoints

    manager = _many_backed_up(project, 2 * compatible.BlobNames.LISTED_AFTER)
    folder = file_history_dir(manager.files.session_id)
    records = read_checkpoints(manager.files.checkpoints)
    pruned = records[0].files[0].hash
    assert pruned is not None
    (folder / pruned).unlink()
    blobs = compatible.BlobNames(folder)
    asked = [blobs.has(item.hash or "") for item in records[0].files]  # past LISTED_AFTER: listed
    assert blobs._names is not None and asked == [item.hash != pruned for item in records[0].files]
    enforce(manager.files.session_id, records, manager.store, cwd=project, blobs=blobs)
    assert (folder / pruned).exists() and blobs.has(pruned)
