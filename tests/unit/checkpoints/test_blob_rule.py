"""The one backup rule (`checkpoints/blob_rule.py`, issue 32): every backup of a record the real
CLI can see has its raw sha256 blob (shell-tracked ones too), every real-CLI backup is in our
store before a rewind can hide it, and redos, forks and a sweep's restore write back the blobs
the real CLI's resume cleanup deleted."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from commandcode.agent.branching import fork_session
from commandcode.checkpoints import store as backups
from commandcode.checkpoints.blob_rule import enforce
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.records import Checkpoint, FileBackup, read_checkpoints, write_checkpoints
from commandcode.checkpoints.rewind import redo, rewind
from commandcode.checkpoints.shell_tracking import ShellTracker
from commandcode.config.paths import file_history_dir
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.writer import SessionWriter
from helpers.checkpoints import new_session_files, write
from helpers.cli import run_ok


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _visible_lines(files: SessionFiles) -> list[dict]:  # type: ignore[type-arg]
    out = []
    for line in files.checkpoints.read_text().split("\n"):
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _clean_up_as_the_real_cli(files: SessionFiles) -> None:
    named = {item["hash"] for record in _visible_lines(files) for item in record["files"]}
    for blob in files.file_history.iterdir():
        if blob.name not in named:
            blob.unlink()


def test_a_shell_tracked_change_gets_the_real_clis_blob(home: Path, project: Path) -> None:
    write(project / "a.txt", b"before the command\n")
    files = new_session_files(project)
    manager = CheckpointManager.for_session(files, project)
    manager.shell = ShellTracker(project, manager.store)
    manager.open_checkpoint("bash turn", 0, None)
    manager.before_shell()
    (project / "a.txt").write_bytes(b"sed changed it\n")
    manager.after_shell()
    manager.flush()
    manager.close()
    [record] = _visible_lines(files)
    [item] = record["files"]
    assert item["source"] == "shell" and "algo" not in item and item["hash"] == _sha(b"before the command\n")
    assert (file_history_dir(files.session_id) / item["hash"]).read_bytes() == b"before the command\n"
    assert manager.store.read(item["blake3"]) == b"before the command\n"


def _turns(project: Path, count: int) -> tuple[SessionFiles, CheckpointManager]:
    """`count` turns, each a prompt, an edit of a.txt and a reply, as the agent records them."""
    files = new_session_files(project)
    manager = CheckpointManager.for_session(files, project)
    with SessionWriter(files, str(project)) as writer:
        for turn in range(count):
            leaf = writer.leaf_id
            manager.open_checkpoint(f"turn {turn + 1}", 2 * turn, None, leaf_entry_id=leaf)
            writer.append_message({"role": "user", "content": [{"type": "text", "text": f"turn {turn + 1}"}]})
            manager.backup_before_edit(str(project / "a.txt"))
            write(project / "a.txt", f"version {turn + 1}\n".encode())
            manager.record_after_edit(str(project / "a.txt"))
            writer.append_message({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
            writer.commit()
    manager.flush()
    manager.close()
    return files, manager


def test_a_redo_writes_back_the_blobs_the_real_cli_cleaned_up(home: Path, project: Path) -> None:
    write(project / "a.txt", b"version 0\n")
    files, _ = _turns(project, 3)
    rewind(files, project, 2, RewindMode.BOTH)
    hidden = [record for record in read_checkpoints(files.checkpoints) if record.rewound]
    assert len(hidden) == 2
    _clean_up_as_the_real_cli(files)
    gone = [item.hash for record in hidden for item in record.files]
    assert not any((files.file_history / str(digest)).exists() for digest in gone)
    redo(files, project)
    for record in _visible_lines(files):
        for item in record["files"]:
            assert _sha((files.file_history / item["hash"]).read_bytes()) == item["hash"]


def test_a_real_cli_backup_is_kept_in_our_store_before_it_is_hidden(home: Path, project: Path) -> None:
    write(project / "a.txt", b"version 0\n")
    files, _ = _turns(project, 2)
    # the real CLI's third turn: its raw blob only
    before = (project / "a.txt").read_bytes()
    files.file_history.mkdir(parents=True, exist_ok=True)
    (files.file_history / _sha(before)).write_bytes(before)
    records = read_checkpoints(files.checkpoints)
    records.append(Checkpoint(id="r3", message_id="r3", turn_number=3, created_at=records[-1].created_at,
                              prompt="real", message_count=4, last_message_id=None,
                              files=[FileBackup(path=str(project / "a.txt"), hash=_sha(before))]))
    write_checkpoints(files.checkpoints, records)
    write(project / "a.txt", b"the real cli's edit\n")
    rewind(files, project, 2, RewindMode.BOTH)
    _clean_up_as_the_real_cli(files)
    assert not (files.file_history / _sha(before)).exists()
    [real] = [record for record in read_checkpoints(files.checkpoints) if record.id == "r3"]
    assert real.rewound and backups.BackupStore().read(real.files[0].extra["blake3"]) == before
    rewind(files, project, 3, RewindMode.CODE)  # from our copy: its blob is gone
    assert (project / "a.txt").read_bytes() == before


def test_hidden_records_need_no_blob_and_blake3_items_stay_when_the_setting_is_off(home: Path, project: Path) -> None:
    store = backups.BackupStore()
    object_id = store.put_bytes(b"ours\n")
    visible = Checkpoint(id="v", message_id="v", turn_number=1, created_at="2026-01-01T00:00:00.000Z", prompt="v",
                         message_count=0, last_message_id=None,
                         files=[FileBackup(path="a.txt", hash=object_id, algorithm=backups.BLAKE3)])
    hidden = Checkpoint(id="h", message_id="h", turn_number=2, created_at="2026-01-01T00:00:00.000Z", prompt="h",
                        message_count=0, last_message_id=None, extra={"rewoundAt": "2026-01-01T00:00:00.000Z"},
                        files=[FileBackup(path="b.txt", hash=object_id, algorithm=backups.BLAKE3)])
    (project / ".commandcode").mkdir()
    (project / ".commandcode" / "settings.json").write_text('{"checkpoints": {"compatibleBackups": false}}')
    assert not enforce("s1", [visible, hidden], store, cwd=project)
    assert visible.files[0].algorithm == backups.BLAKE3
    (project / ".commandcode" / "settings.json").write_text("{}")
    assert enforce("s1", [visible, hidden], store, cwd=project)
    assert visible.files[0].hash == _sha(b"ours\n") and visible.files[0].extra["blake3"] == object_id
    assert hidden.files[0].algorithm == backups.BLAKE3  # the real CLI never reads a hidden line
    assert (file_history_dir("s1") / _sha(b"ours\n")).read_bytes() == b"ours\n"


def test_a_fork_and_a_sweep_restore_write_back_cleaned_up_blobs(home: Path, project: Path) -> None:
    write(project / "a.txt", b"version 0\n")
    files, _ = _turns(project, 2)
    for blob in files.file_history.iterdir():
        blob.unlink()  # the real CLI's prune (its newest 200 by mtime) or a hand cleanup
    fork = fork_session(files, project).files
    for record in _visible_lines(fork):
        for item in record["files"]:
            assert (fork.file_history / item["hash"]).is_file()
    for blob in files.file_history.iterdir():
        blob.unlink()
    run_ok(["sweep", "--archive", "--older-than", "0h", "--include-named"], project, home)
    assert not files.transcript.exists()
    run_ok(["sweep", "--restore", files.session_id], project, home)
    for record in _visible_lines(files):
        for item in record["files"]:
            assert _sha((files.file_history / item["hash"]).read_bytes()) == item["hash"]


def test_a_sweep_restore_is_exact_and_the_next_write_converts_blake3_items(home: Path, project: Path) -> None:
    """A restore brings the records back byte for byte (sweep's promise: bytes, modes, times), even
    when the session's folder now keeps compatible backups; the manager's first write of the
    session then converts its blake3-only items and writes their blobs."""
    settings = project / ".commandcode" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"checkpoints": {"compatibleBackups": false}}')
    write(project / "a.txt", b"version 0\n")
    files, _ = _turns(project, 2)
    assert {item.get("algo") for record in _visible_lines(files) for item in record["files"]} == {"blake3"}
    archived = files.checkpoints.read_bytes()
    settings.write_text("{}")  # compatible backups on from now
    elsewhere = project.parent / "elsewhere"  # the restore runs in another folder
    elsewhere.mkdir()
    run_ok(["sweep", "--archive", "--older-than", "0h", "--include-named"], project, home)
    assert not files.transcript.exists()
    run_ok(["sweep", "--restore", files.session_id], elsewhere, home)
    assert files.checkpoints.read_bytes() == archived
    manager = CheckpointManager.for_session(files, project)
    manager.open_checkpoint("turn 3", 4, None, leaf_entry_id=None)
    manager.flush()
    manager.close()
    items = [item for record in _visible_lines(files) for item in record["files"]]
    assert len(items) == 2 and {item.get("algo") for item in items} == {None}
    for item in items:
        data = backups.BackupStore().read(item["blake3"])
        assert item["hash"] == _sha(data) and (files.file_history / item["hash"]).read_bytes() == data


def test_the_callers_context_decides_and_a_library_caller_without_one_reads_the_folders(home: Path,
                                                                                         project: Path) -> None:
    """A session's rewind passes its manager's context: the settings it read are the ones that
    apply (not a second read of the files); a caller with none gets the folder's own (issue 27)."""
    from commandcode.config.context import ProjectContext

    store = backups.BackupStore()
    object_id = store.put_bytes(b"ours\n")

    def records() -> list[Checkpoint]:
        return [Checkpoint(id="v", message_id="v", turn_number=1, created_at="2026-01-01T00:00:00.000Z", prompt="v",
                           message_count=0, last_message_id=None,
                           files=[FileBackup(path="a.txt", hash=object_id, algorithm=backups.BLAKE3)])]

    (project / ".commandcode").mkdir()
    settings = project / ".commandcode" / "settings.json"
    settings.write_text('{"checkpoints": {"compatibleBackups": false}}')
    context = ProjectContext(project)
    assert context.settings().checkpoints_compatible_backups is False
    settings.write_text("{}")  # changed on disk after the session read its settings
    assert not enforce("s1", records(), store, cwd=project, project=context)
    assert enforce("s1", records(), store, cwd=project)  # no context: the folder's, read now
    assert enforce("s1", records(), store, cwd=project, project=context.refresh())
    settings.write_text('{"checkpoints": {"compatibleBackups": false}}')
    other = project / "elsewhere"
    (other / ".git").mkdir(parents=True)  # another project root: its own settings (the default), not the context's
    assert enforce("s1", records(), store, cwd=other, project=context.refresh())

