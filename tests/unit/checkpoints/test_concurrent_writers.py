"""A session's sub-agents write files from several threads into the parent's open checkpoint
(issue 28): every write is backed up before it lands, in the checkpoint current when it lands,
two writers of one file take turns (neither edit is lost), the checkpoints file stays whole, and
a code rewind of the turn puts the tree back byte for byte. Real files, the real store, real
threads against the checkpoint API (`CheckpointManager`) and the real file tools."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from commandcode.agent.tools import run_tool
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.records import read_checkpoints
from commandcode.checkpoints.rewind import RewindOptions, rewind
from commandcode.storage.path_locks import held_paths
from helpers.checkpoints import new_session_files, snapshot, write

THREADS = 6
FILES_PER_THREAD = 12


def _manager(project: Path) -> CheckpointManager:
    return CheckpointManager.for_session(new_session_files(project), project, compatible_backups=False)


def _seed(project: Path) -> None:
    for index in range(THREADS * FILES_PER_THREAD // 2):  # half the files exist, half are created
        write(project / f"t{index % THREADS}" / f"f{index}.txt", f"original {index}\n" * (index + 1))
    write(project / "shared.txt", "shared\n")
    write(project / "script.sh", "#!/bin/sh\n", 0o755)


def _run_together(work: list[threading.Thread]) -> None:
    for thread in work:
        thread.start()
    for thread in work:
        thread.join()


def test_parallel_writers_through_the_old_call_sequence_keep_the_checkpoints_file_whole(home: Path,
                                                                                          project: Path) -> None:
    """The call sequence a turn used before `editing` (backup, tool, after-digest), from many
    threads at once: every backup lands in the file (on 55fdfa8 the threads' rewrites of the
    checkpoints file share one temp name, so backups fail or are lost), and the rewind restores."""
    _seed(project)
    manager = _manager(project)
    manager.open_checkpoint("parallel", 0, None)
    before = snapshot(project)
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def agent(number: int) -> None:
        try:
            start.wait()
            for index in range(number, THREADS * FILES_PER_THREAD, THREADS):
                path = project / f"t{number}" / f"f{index}.txt"
                manager.backup_before_edit(str(path))
                outcome = run_tool("write_file", {"file_path": str(path), "content": f"agent {number} wrote {index}\n"},
                                   project)
                assert not outcome.is_error, outcome.text
                manager.record_after_edit(str(path))
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    _run_together([threading.Thread(target=agent, args=(number,)) for number in range(THREADS)])
    assert not errors, errors
    manager.flush()
    on_disk = read_checkpoints(manager.files.checkpoints)
    assert len(on_disk) == 1
    paths = [item.path for item in on_disk[0].files]
    assert sorted(paths) == sorted({*paths}) and len(paths) == THREADS * FILES_PER_THREAD
    rewind(manager.files, project, 1, RewindMode.CODE, RewindOptions(checkpoints=manager))
    assert snapshot(project) == before


def test_two_writers_of_one_file_take_turns_and_the_rewind_restores_it(home: Path, project: Path) -> None:
    """Sub-agents editing the same file: each edit sees the one before it (none is lost, as an
    unlocked read-change-replace loses one), the checkpoint holds the file's state before the
    turn once, and the rewind puts it back."""
    _seed(project)
    manager = _manager(project)
    manager.open_checkpoint("same file", 0, None)
    before = snapshot(project)
    shared = project / "shared.txt"
    start = threading.Barrier(THREADS)
    results: list[str] = []

    def agent(number: int) -> None:
        start.wait()
        for step in range(FILES_PER_THREAD):
            with manager.editing(str(shared)):
                outcome = run_tool("edit_file", {"file_path": str(shared), "old_string": "shared\n",
                                                 "new_string": f"shared\n{number}.{step}\n"}, project)
                results.append(outcome.text)
                manager.record_after_edit(str(shared))

    _run_together([threading.Thread(target=agent, args=(number,)) for number in range(THREADS)])
    lines = shared.read_text().splitlines()
    assert sorted(lines[1:]) == sorted(f"{number}.{step}" for number in range(THREADS) for step in range(FILES_PER_THREAD))
    items = [item for item in manager.current.files if Path(item.path) == shared]  # type: ignore[union-attr]
    assert len(items) == 1 and items[0].hash is not None
    assert held_paths() == 0
    rewind(manager.files, project, 1, RewindMode.CODE, RewindOptions(checkpoints=manager))
    assert snapshot(project) == before


def test_edit_tools_hold_the_file_so_concurrent_edits_are_never_lost(home: Path, project: Path) -> None:
    """Without any checkpoint: the tools alone serialize writers of one file (55fdfa8 lost edits)."""
    target = project / "counter.txt"
    write(target, "start\n")
    start = threading.Barrier(4)

    def agent(number: int) -> None:
        start.wait()
        for step in range(25):
            outcome = run_tool("edit_file", {"file_path": str(target), "old_string": "start\n",
                                             "new_string": f"start\n{number}-{step}\n"}, project)
            assert not outcome.is_error, outcome.text

    _run_together([threading.Thread(target=agent, args=(number,)) for number in range(4)])
    assert len(target.read_text().splitlines()) == 1 + 4 * 25


def test_a_checkpoint_opens_only_between_writes(home: Path, project: Path) -> None:
    """A background sub-agent mid-write when the parent's next turn opens: the new checkpoint
    waits for the write to land, so the write is in the checkpoint that backed it up; a write
    after the opening is backed up into the new one, and rewinding the new turn restores it."""
    _seed(project)
    manager = _manager(project)
    manager.open_checkpoint("turn 1", 0, None)
    target = project / "t0" / "f0.txt"
    inside, release, opened = threading.Event(), threading.Event(), threading.Event()

    def background_write() -> None:
        try:
            with manager.editing(str(target)):
                inside.set()
                release.wait()
                run_tool("write_file", {"file_path": str(target), "content": "turn 1 write\n"}, project)
                manager.record_after_edit(str(target))
        finally:
            inside.set()  # a failure shows as the assertions below, never as a hang

    def next_turn() -> None:
        manager.open_checkpoint("turn 2", 2, None)
        opened.set()

    writer = threading.Thread(target=background_write)
    writer.start()
    inside.wait()
    opener = threading.Thread(target=next_turn)
    opener.start()
    opener.join(0.3)
    assert not opened.is_set()  # held while the write is under way
    release.set()
    writer.join()
    opener.join()
    assert [record.prompt for record in manager.records] == ["turn 1", "turn 2"]
    after_turn_one = snapshot(project)
    with manager.editing(str(target)):
        run_tool("write_file", {"file_path": str(target), "content": "turn 2 write\n"}, project)
    assert [Path(item.path) for item in manager.records[1].files] == [target]
    rewind(manager.files, project, 2, RewindMode.CODE, RewindOptions(checkpoints=manager))
    assert snapshot(project) == after_turn_one


def test_writers_arriving_during_a_write_of_the_checkpoints_file_share_the_next_one(
        home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Group commit: while one writer's backup is being written (held here until three others have
    added theirs), the three share the next write instead of taking turns at one each (on
    55fdfa8 four backups made four writes). Each still returns only once the file on disk holds
    its item: backed up durably before the write."""
    import commandcode.checkpoints.manager as manager_module
    import commandcode.checkpoints.records as records_module

    _seed(project)
    manager = _manager(project)
    manager.open_checkpoint("group", 0, None)
    writes: list[int] = []
    real = records_module.atomic_write

    def counted(path: Path, data: bytes, **options: int) -> None:
        if path == manager.files.checkpoints and manager.current is not None:
            writes.append(data.count(b'"path"'))
            if len(writes) == 1:  # the first write waits until the others have added their items
                for _ in range(500):
                    if len(manager.current.files) == 4:
                        break
                    threading.Event().wait(0.01)
        real(path, data, **options)

    monkeypatch.setattr(manager_module, "atomic_write", counted, raising=False)
    monkeypatch.setattr(records_module, "atomic_write", counted)
    paths = [project / "t0" / f"f{index * THREADS}.txt" for index in range(4)]
    missing: list[str] = []

    def writer(path: Path) -> None:
        manager.backup_before_edit(str(path))
        if str(path) not in {item.path for item in read_checkpoints(manager.files.checkpoints)[0].files}:
            missing.append(path.name)

    first = threading.Thread(target=writer, args=(paths[0],))
    first.start()
    while not writes:
        threading.Event().wait(0.005)
    _run_together([threading.Thread(target=writer, args=(path,)) for path in paths[1:]])
    first.join()
    assert missing == []
    assert writes == [1, 4]
    manager.close()


def test_a_write_that_fails_before_it_starts_leaves_the_next_writers_free(
        home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Taking the records' bytes fails (the backup rule's conversion, here): that backup fails
    with its error, and the next one is written (not left waiting for a write that never comes)."""
    _seed(project)
    manager = _manager(project)
    manager.open_checkpoint("failing", 0, None)
    real = manager._rule
    failures = iter([OSError(28, "No space left on device")])

    def rule(*, defer: bool = False) -> object:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return real(defer=defer)

    monkeypatch.setattr(manager, "_rule", rule)
    first, second = project / "t0" / "f0.txt", project / "t1" / "f1.txt"
    with pytest.raises(OSError):
        manager.backup_before_edit(str(first))
    finished = threading.Thread(target=manager.backup_before_edit, args=(str(second),), daemon=True)
    finished.start()
    finished.join(120)  # a deadlock guard only: it returns at once unless the write never comes
    assert not finished.is_alive()
    assert {str(first), str(second)} <= {item.path for item in read_checkpoints(manager.files.checkpoints)[0].files}
    manager.close()
