"""Recording what one `bash` call changed is linear in the number of changes (issue 26 §4: 20,000
files created by one command took 199 s, each change looked up by a scan of the turn's items).
Counted, not timed: path resolutions per recorded change stay constant as the count grows."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode.checkpoints import manager as manager_module
from commandcode.checkpoints import records as records_module
from commandcode.checkpoints import shell_recording as shell_recording_module
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.records import Checkpoint, FileBackup
from commandcode.checkpoints.shell_tracking import ShellTracker
from helpers.checkpoints import new_session_files


def _resolutions(project: Path, count: int, monkeypatch: pytest.MonkeyPatch) -> int:
    project.mkdir()
    files = new_session_files(project)
    manager = CheckpointManager.for_session(files, project)
    manager.shell = ShellTracker(project, manager.store)
    manager.open_checkpoint("make files", 0, None)
    manager.before_shell()
    calls = 0
    original = records_module.resolve_path

    def counted(path: str, cwd: Path) -> str:
        nonlocal calls
        calls += 1
        return original(path, cwd)

    monkeypatch.setattr(records_module, "resolve_path", counted)
    monkeypatch.setattr(manager_module, "resolve_path", counted)
    monkeypatch.setattr(shell_recording_module, "resolve_path", counted)
    for index in range(count):
        (project / f"made{count}").mkdir(exist_ok=True)
        (project / f"made{count}" / f"f{index}.txt").write_text(f"{index}\n")
    manager.after_shell()
    manager.flush()
    assert len(manager.records[-1].files) == count
    monkeypatch.undo()
    manager.close()
    return calls


def test_recording_a_commands_changes_is_linear(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = _resolutions(tmp_path / "small", 300, monkeypatch)
    large = _resolutions(tmp_path / "large", 1200, monkeypatch)
    assert 0 < small <= 2 * 300 and 0 < large <= 2 * 1200, (small, large)  # 55fdfa8: 45,150 and 720,600


def test_items_appended_in_one_batch_are_found_by_their_paths(tmp_path: Path) -> None:
    record = Checkpoint(id="c", message_id="c", turn_number=1, created_at="", prompt=None, message_count=0,
                        last_message_id=None)
    first = FileBackup(path="a.txt", hash=None)
    record.files.append(first)
    assert record.backup_for(str(tmp_path / "a.txt"), tmp_path) is first
    batch = [(str(tmp_path / f"f{index}"), FileBackup(path=str(tmp_path / f"f{index}"), hash=None)) for index in range(3)]
    again = FileBackup(path=str(tmp_path / "a.txt"), hash=None)
    record.add_files([*batch, (str(tmp_path / "a.txt"), again)], tmp_path)
    assert [record.backup_for(key, tmp_path) for key, _ in batch] == [item for _, item in batch]
    assert record.backup_for(str(tmp_path / "a.txt"), tmp_path) is first  # the first item of a path counts
    later = FileBackup(path="b.txt", hash=None)
    record.files.append(later)  # one by one after a batch: indexed too
    assert record.backup_for(str(tmp_path / "b.txt"), tmp_path) is later
    assert record.files == [first, *(item for _, item in batch), again, later]
    record.files = record.files[:2]  # a list replaced: indexed anew
    assert record.backup_for(str(tmp_path / "f0"), tmp_path) is batch[0][1]
    assert record.backup_for(str(tmp_path / "f1"), tmp_path) is None
