"""Recording what one `bash` call changed is linear in the number of changes (issue 26 §4: 20,000
files created by one command took 199 s, each change looked up by a scan of the turn's items).
Counted, not timed: path resolutions per recorded change stay constant as the count grows."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode.checkpoints import manager as manager_module
from commandcode.checkpoints import records as records_module
from commandcode.checkpoints.manager import CheckpointManager
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
    assert small <= 2 * 300 and large <= 2 * 1200, (small, large)  # 55fdfa8: 45,150 and 720,600
