"""Checkpoint records and the `CheckpointManager`: the real CLI's format, our extra keys, caps,
retention, the disk-low pause and the shared object store."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from commandcode.checkpoints import store as backups
from commandcode.checkpoints.manager import RESUME_FREE_BYTES, CheckpointManager
from commandcode.checkpoints.records import read_checkpoints, write_checkpoints
from commandcode.checkpoints.references import referenced_objects, sweep_objects
from commandcode.checkpoints.retention import MAX_BACKUPS_PER_SESSION
from commandcode.errors import CheckpointError
from commandcode.sessions.files import SessionFiles
from helpers.checkpoints import (  # noqa: F401
    SAMPLE_SESSION,
    SAMPLES,
    new_session_files,
    small_tmpfs,
    write,
)


def manager_for(project: Path, **options: object) -> CheckpointManager:
    """A manager writing only our store unless a test asks for compatible backups
    (tests/unit/checkpoints/test_compatible_backups.py covers those)."""
    options.setdefault("compatible_backups", False)
    return CheckpointManager.for_session(new_session_files(project), project, **options)  # type: ignore[arg-type]


def lines_of(files: SessionFiles) -> list[dict]:
    text = files.checkpoints.read_text()
    assert not text.endswith("\n"), "no trailing newline"
    return [json.loads(line) for line in text.split("\n")]


def test_records_have_the_real_cli_shape(home: Path, project: Path) -> None:
    manager = manager_for(project)
    manager.open_checkpoint("\n\n   Say hello please   \nsecond line", 0, None)
    manager.open_checkpoint("x" * 300, 2, "ff701649-0c9d-4000-afaa-5a729c4c4da6")
    first, second = lines_of(manager.files)
    assert list(first) == ["id", "messageId", "turnNumber", "createdAt", "prompt", "messageCount", "files"]
    assert first["id"] == first["messageId"] and len(first["id"]) == 36
    assert (first["turnNumber"], first["prompt"], first["messageCount"], first["files"]) == (1, "Say hello please", 0, [])
    assert first["createdAt"].endswith("Z") and len(first["createdAt"]) == 24
    assert second["turnNumber"] == 2 and len(second["prompt"]) == 120
    assert second["lastMessageId"] == "ff701649-0c9d-4000-afaa-5a729c4c4da6"
    blank = manager_for(project)
    blank.open_checkpoint("   \n  ", 0, None)
    assert "prompt" not in lines_of(blank.files)[0]


def test_backups_record_algorithm_mode_and_after_state(home: Path, project: Path) -> None:
    manager = manager_for(project)
    manager.open_checkpoint("edit things", 0, None)
    script = write(project / "run.sh", b"#!/bin/sh\necho old\n", 0o755)
    assert manager.backup_before_edit(str(script)) == []
    script.write_bytes(b"#!/bin/sh\necho new\n")
    manager.record_after_edit(str(script))
    assert manager.backup_before_edit("new.txt") == []  # relative to the cwd, does not exist yet
    write(project / "new.txt", b"created")
    manager.record_after_edit("new.txt")
    manager.flush()
    [record] = lines_of(manager.files)
    existing, created = record["files"]
    assert existing == {
        "path": str(script),
        "hash": backups.content_id(b"#!/bin/sh\necho old\n"),
        "algo": "blake3",
        "mode": 0o755,
        "afterHash": backups.content_id(b"#!/bin/sh\necho new\n"),
    }
    assert created == {"path": "new.txt", "hash": None, "algo": "blake3", "afterHash": backups.content_id(b"created")}
    assert manager.store.read(existing["hash"]) == b"#!/bin/sh\necho old\n"


def test_only_the_first_backup_of_a_path_in_a_checkpoint_counts(home: Path, project: Path) -> None:
    manager = manager_for(project)
    manager.open_checkpoint("turn", 0, None)
    target = write(project / "a.txt", b"one")
    manager.backup_before_edit(str(target))
    target.write_bytes(b"two")
    manager.record_after_edit(str(target))
    manager.backup_before_edit(str(project / "." / "a.txt"))
    target.write_bytes(b"three")
    manager.record_after_edit(str(target))
    manager.flush()
    [record] = lines_of(manager.files)
    assert len(record["files"]) == 1
    assert record["files"][0]["hash"] == backups.content_id(b"one")
    assert record["files"][0]["afterHash"] == backups.content_id(b"three")


def test_symlinks_are_skipped_with_a_notice_naming_them(home: Path, project: Path, tmp_path: Path) -> None:
    secret = write(tmp_path / "secret.txt", b"not ours")
    (project / "link.txt").symlink_to(secret)
    manager = manager_for(project)
    manager.open_checkpoint("turn", 0, None)
    notices = manager.backup_before_edit(str(project / "link.txt"))
    assert len(notices) == 1 and "link.txt" in notices[0] and "symlink" in notices[0]
    [record] = lines_of(manager.files)
    assert record["files"] == [{"path": str(project / "link.txt"), "hash": None, "skipped": "symlink"}]
    assert manager.store.usage() == (0, 0)


def test_files_over_ten_megabytes_are_never_read(home: Path, project: Path) -> None:
    big = project / "big.bin"
    with open(big, "wb") as handle:
        handle.truncate(backups.MAX_BACKUP_SIZE + 1)
    big.chmod(0o000)  # unreadable: proves it is not opened (root could read it anyway; lstat only)
    manager = manager_for(project)
    manager.open_checkpoint("turn", 0, None)
    notices = manager.backup_before_edit(str(big))
    assert "over 10 MB" in notices[0]
    assert lines_of(manager.files)[0]["files"] == [{"path": str(big), "hash": None, "skipped": "too_large"}]


def test_disk_low_pauses_once_and_resumes_once(home: Path, project: Path) -> None:
    free = {"bytes": 10_000}
    manager = manager_for(project, free_space=lambda _path: free["bytes"])
    manager.open_checkpoint("turn", 0, None)
    first = write(project / "a.txt", b"a" * 6_000)
    second = write(project / "b.txt", b"b" * 10)
    third = write(project / "c.txt", b"c" * 10)
    notices = manager.backup_before_edit(str(first))
    assert len(notices) == 1 and "paused" in notices[0]
    assert manager.backup_before_edit(str(second)) == []  # paused: no second notice
    free["bytes"] = RESUME_FREE_BYTES
    notices = manager.backup_before_edit(str(third))
    assert len(notices) == 1 and "resumed" in notices[0]
    items = lines_of(manager.files)[0]["files"]
    assert [item.get("skipped") for item in items] == ["disk_full", "disk_full", None]
    assert items[2]["hash"] == backups.content_id(b"c" * 10)


def test_disk_low_on_a_real_small_filesystem(home: Path, project: Path, tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "tiny", "2m") as mount:
        store = backups.BackupStore(mount / "objects")
        manager = manager_for(project, store=store)
        manager.open_checkpoint("turn", 0, None)
        small = write(project / "small.txt", b"fits")
        assert manager.backup_before_edit(str(small)) == []
        big = write(project / "big.bin", os.urandom(1_500_000))
        notices = manager.backup_before_edit(str(big))
        assert len(notices) == 1 and "paused" in notices[0]
        later = write(project / "later.txt", b"later")
        assert manager.backup_before_edit(str(later)) == []
        items = lines_of(manager.files)[0]["files"]
        assert [item.get("skipped") for item in items] == [None, "disk_full", "disk_full"]
        assert store.read(items[0]["hash"]) == b"fits"


def test_backup_without_an_open_checkpoint_is_an_error(home: Path, project: Path) -> None:
    manager = manager_for(project)
    with pytest.raises(CheckpointError, match="open_checkpoint"):
        manager.backup_before_edit(str(project / "a.txt"))


def test_checkpoints_work_without_a_transcript(home: Path, project: Path) -> None:
    files = new_session_files(project)
    manager = CheckpointManager.for_session(files, project)
    manager.open_checkpoint("no session", 0, None)
    assert files.checkpoints.exists() and not files.transcript.exists()
    assert CheckpointManager.for_session(files, project).records[0].prompt == "no session"


@pytest.mark.home_on_tmpfs
def test_the_oldest_checkpoints_age_out_past_two_hundred_backups(home: Path, project: Path) -> None:
    manager = manager_for(project)
    for turn in range(5):
        manager.open_checkpoint(f"turn {turn}", turn * 2, None)
        for index in range(60):
            target = write(project / f"f{index}.txt", f"{turn}-{index}")
            manager.backup_before_edit(str(target))
    records = list(manager.records)
    assert [record.prompt for record in records] == ["turn 2", "turn 3", "turn 4"]
    assert sum(record.backup_count for record in records) <= MAX_BACKUPS_PER_SESSION
    assert [record.turn_number for record in records] == [3, 4, 5]
    manager.open_checkpoint("turn 5", 10, None)
    assert manager.records[-1].turn_number == 6, "numbers never repeat after an age-out"


def test_checkpoints_older_than_thirty_days_age_out_on_open(home: Path, project: Path) -> None:
    files = new_session_files(project)
    manager = CheckpointManager.for_session(files, project)
    manager.open_checkpoint("old", 0, None)
    manager.open_checkpoint("new", 2, None)
    later = lambda: datetime.now(UTC) + timedelta(days=31)  # noqa: E731
    records = read_checkpoints(files.checkpoints)
    records[1].created_at = (datetime.now(UTC) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    write_checkpoints(files.checkpoints, records)
    reopened = CheckpointManager.for_session(files, project, now=later)
    assert [record.prompt for record in reopened.records] == ["new"]


def test_sweep_never_deletes_an_object_another_session_references(home: Path, project: Path) -> None:
    shared = write(project / "shared.txt", b"same bytes in two sessions")
    first = manager_for(project)
    second = manager_for(project)
    for manager in (first, second):
        manager.open_checkpoint("turn", 0, None)
        manager.backup_before_edit(str(shared))
    only_first = write(project / "only.txt", b"only the first session")
    first.backup_before_edit(str(only_first))
    assert first.store.usage()[0] == 2, "identical content is stored once across sessions"
    first.files.checkpoints.unlink()
    report = sweep_objects(first.store, grace_seconds=0)
    assert report["deleted_objects"] == 1
    assert first.store.read(backups.content_id(b"same bytes in two sessions")) == b"same bytes in two sessions"
    assert referenced_objects() == {backups.content_id(b"same bytes in two sessions")}


def test_a_fork_copies_no_object(home: Path, project: Path) -> None:
    parent = manager_for(project)
    parent.open_checkpoint("turn", 0, None)
    parent.backup_before_edit(str(write(project / "a.txt", b"x" * 5000)))
    objects_before = parent.store.usage()
    fork = new_session_files(project)
    shutil.copyfile(parent.files.checkpoints, fork.checkpoints)
    assert CheckpointManager.for_session(fork, project).records[0].files[0].hash == parent.records[0].files[0].hash
    assert parent.store.usage() == objects_before


def test_real_cli_sample_records_are_read_and_rewritten_compatibly(home: Path, tmp_path: Path) -> None:
    source = SAMPLES / "projects/home-dev-proj" / f"{SAMPLE_SESSION}.checkpoints.jsonl"
    records = read_checkpoints(source)
    assert [record.turn_number for record in records] == [1, 2, 3]
    assert records[2].files[0].algorithm == "sha256" and records[2].files[0].hash.startswith("f34848ca")
    assert records[1].files[0].hash is None and records[0].last_message_id is None
    copy = tmp_path / "copy.checkpoints.jsonl"
    write_checkpoints(copy, records)
    assert copy.read_bytes() == source.read_bytes(), "a round trip keeps the real CLI's bytes"


def test_legacy_records_with_a_messages_array_are_converted(home: Path, tmp_path: Path) -> None:
    legacy = tmp_path / "legacy.checkpoints.jsonl"
    legacy.write_text(
        json.dumps({"id": "c1", "messageId": "c1", "turnNumber": 1, "createdAt": "2026-01-01T00:00:00.000Z",
                    "messages": [{"role": "user", "meta": {"messageId": "m1"}}, {"role": "assistant", "meta": {"messageId": "m2"}}],
                    "files": [], "futureKey": 1})
        + "\nnot json\n"
    )
    [record] = read_checkpoints(legacy)
    assert (record.message_count, record.last_message_id) == (2, "m2")
    assert record.to_json()["futureKey"] == 1 and "messages" not in record.to_json()


def test_sweep_keeps_objects_of_a_session_stored_outside_the_projects_folder(home: Path, project: Path, tmp_path: Path) -> None:
    elsewhere = SessionFiles(tmp_path / "elsewhere", "11111111-2222-4333-8444-555555555555")
    manager = CheckpointManager.for_session(elsewhere, project)
    manager.open_checkpoint("turn", 0, None)
    manager.backup_before_edit(str(write(project / "a.txt", b"kept by an outside session")))
    report = sweep_objects(manager.store, grace_seconds=0)
    assert report["deleted_objects"] == 0
    assert manager.store.read(backups.content_id(b"kept by an outside session"))


def test_after_digests_reach_disk_with_the_next_write_on_collection_or_at_exit(home: Path, project: Path) -> None:
    import gc
    import subprocess
    import sys
    import textwrap

    manager = manager_for(project)
    manager.open_checkpoint("turn", 0, None)
    target = write(project / "a.txt", b"one")
    manager.backup_before_edit(str(target))
    target.write_bytes(b"two")
    manager.record_after_edit(str(target))
    assert "afterHash" not in lines_of(manager.files)[0]["files"][0], "not fsynced on its own"
    files = manager.files
    del manager
    gc.collect()
    assert lines_of(files)[0]["files"][0]["afterHash"] == backups.content_id(b"two")

    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from commandcode.checkpoints.manager import CheckpointManager
        from commandcode.sessions.files import SessionFiles
        manager = CheckpointManager.for_session(SessionFiles(Path({str(files.directory)!r}), "exit-test"), Path({str(project)!r}))
        manager.open_checkpoint("turn", 0, None)
        manager.backup_before_edit({str(target)!r})
        Path({str(target)!r}).write_bytes(b"three")
        manager.record_after_edit({str(target)!r})
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    exited = SessionFiles(files.directory, "exit-test")
    assert lines_of(exited)[0]["files"][0]["afterHash"] == backups.content_id(b"three")


def test_a_late_flush_never_clobbers_a_file_changed_meanwhile(home: Path, project: Path) -> None:
    import gc

    manager = manager_for(project)
    manager.open_checkpoint("one", 0, None)
    manager.open_checkpoint("two", 2, None)
    target = write(project / "a.txt", b"x")
    manager.backup_before_edit(str(target))
    manager.record_after_edit(str(target))
    files = manager.files
    records = read_checkpoints(files.checkpoints)
    write_checkpoints(files.checkpoints, records[:1])  # a rewind in another process dropped turn 2
    del manager
    gc.collect()
    assert [record.prompt for record in read_checkpoints(files.checkpoints)] == ["one"]


MALFORMED_ITEMS = [
    ({"path": "a.txt", "hash": "zz", "algo": "blake3"}, "`hash` \"zz\" is not a 64-digit hex digest"),
    ({"path": "a.txt", "hash": None, "algo": "blake3", "afterHash": "nope"}, "`afterHash` \"nope\""),
    ({"path": "a.txt", "hash": "ab" * 32, "algo": "blake3", "mode": -1}, "`mode` -1"),
    ({"path": "a.txt", "hash": "ab" * 32, "algo": "blake3", "mode": 2**40}, "`mode` 1099511627776"),
    ({"path": "a.txt", "hash": "ab" * 32, "algo": "md5"}, "`algo` \"md5\""),
    ({"path": "a.txt", "hash": 7}, "`hash` 7 is not a string"),
    ({"path": "\ud800.txt", "hash": None, "algo": "blake3"}, "lone surrogate"),
    # past the usual item's fast test (`_item_problem`): each falls through to the exact checks
    ({"path": "a\x00.txt", "hash": None, "algo": "blake3"}, "NUL character"),
    ({"path": "a.txt", "hash": "g" * 64, "algo": "blake3"}, "`hash` \"gggggggggg"),
    ({"path": "a.txt", "hash": "ab" * 32 + "a", "algo": "blake3"}, "is not a 64-digit hex digest"),
    ({"path": "a.txt", "hash": "ab" * 31 + " a", "algo": "blake3"}, "is not a 64-digit hex digest"),
    ({"path": "a.txt", "hash": "ab" * 31 + "\t\n", "algo": "blake3"}, "is not a 64-digit hex digest"),
    ({"path": "a.txt", "hash": "ab" * 31 + "\u0663\u0663", "algo": "blake3"}, "is not a 64-digit hex digest"),
    ({"path": "a.txt", "hash": None, "algo": "blake3", "afterHash": 5}, "`afterHash` 5"),
    ({"path": "a.txt", "hash": "ab" * 32, "algo": "blake3", "mode": True}, "`mode` true"),
    ({"path": "a.txt", "hash": "ab" * 32, "algo": "blake3", "mode": 420.0}, "`mode` 420.0"),
    ({"path": "a.txt", "hash": "ab" * 32, "algo": ["blake3"]}, "`algo` [\"blake3\"]"),
    ({"path": "a.txt", "hash": "ab" * 32, "algo": None}, "`algo` null"),
]


@pytest.mark.parametrize("item", [
    {"path": "a.txt", "hash": "AB" * 32, "algo": "blake3", "mode": 0, "afterHash": None},
    {"path": "dir/é.txt", "hash": "ab" * 32, "mode": 2**32 - 1, "afterHash": "cd" * 32, "blake3": "ef" * 32},
    {"path": "a.txt", "hash": None, "skipped": "too_large", "source": "shell"},
])
def test_a_usual_item_is_read_whole_with_its_extra_keys(item: dict) -> None:
    """The fast test of the usual item accepts what the exact checks accept, and the item keeps
    every key it does not know (written back as read)."""
    from commandcode.checkpoints.records import FileBackup

    parsed = FileBackup.from_json(item)
    assert parsed is not None and parsed.problem is None and parsed.to_json() == item


@pytest.mark.parametrize(("item", "reason"), MALFORMED_ITEMS)
def test_a_malformed_item_is_unrestorable_and_written_back_unchanged(home: Path, project: Path,
                                                                    item: dict, reason: str) -> None:
    from commandcode.checkpoints.rewind_code import plan_code

    files = new_session_files(project)
    from commandcode.storage.ids import iso_now

    record = {"id": "c1", "messageId": "c1", "turnNumber": 1, "createdAt": iso_now(),
              "messageCount": 0, "files": [item, {"path": "b.txt", "hash": None, "algo": "blake3"}]}
    files.checkpoints.parent.mkdir(parents=True)
    files.checkpoints.write_text(json.dumps(record))
    [checkpoint] = read_checkpoints(files.checkpoints)
    malformed, fine = checkpoint.files
    assert not malformed.restorable and reason in (malformed.problem or "")
    assert fine.restorable and fine.problem is None
    plan = plan_code([checkpoint], 0, project, files)
    assert [Path(target.path).name for target in plan.targets] == ["b.txt"]
    [problem] = plan.problems
    assert problem.code == "invalid_record" and reason in problem.message
    # A later write of the file (a new turn) keeps the malformed item exactly as it was read.
    manager = CheckpointManager.for_session(files, project)
    manager.open_checkpoint("next", 2, None)
    assert json.loads(files.checkpoints.read_text().split("\n")[0])["files"][0] == item


def test_a_line_nested_past_the_recursion_limit_is_skipped_like_other_bad_lines(home: Path, project: Path) -> None:
    files = new_session_files(project)
    files.checkpoints.parent.mkdir(parents=True)
    good = {"id": "c1", "turnNumber": 1, "createdAt": "", "messageCount": 0, "files": []}
    deep = '{"id":"c0","files":' + "[" * 200_000 + "]" * 200_000 + "}"
    files.checkpoints.write_text(deep + "\n" + json.dumps(good))
    assert [record.id for record in read_checkpoints(files.checkpoints)] == ["c1"]


def test_a_fifo_checkpoints_file_is_refused_at_once_and_never_opened_for_writing(home: Path, project: Path) -> None:
    files = new_session_files(project)
    files.checkpoints.parent.mkdir(parents=True)
    os.mkfifo(files.checkpoints)  # no writer ever opens it: a blocking open would hang here
    with pytest.raises(CheckpointError, match="is not a regular file"):
        read_checkpoints(files.checkpoints)
    with pytest.raises(CheckpointError, match="is not a regular file"):
        CheckpointManager.for_session(files, project)
    # Another session's sweep cannot know what that file references, so it deletes nothing.
    other = manager_for(project)
    other.open_checkpoint("turn", 0, None)
    write(project / "kept.txt", b"kept\n")
    other.backup_before_edit(str(project / "kept.txt"))
    other.records.clear()
    other._sweep(force=True)
    assert other.store.contains(backups.content_id(b"kept\n"))
    assert os.path.exists(files.checkpoints) and not os.path.isfile(files.checkpoints)
