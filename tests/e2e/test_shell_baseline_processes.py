"""The shell-tracking baseline across real `commandcode` processes (issue 14): the next `-p` of a
session starts from the baseline the last one kept instead of reading the project again, and the
store's garbage collection (`doctor --gc`, a real process) never deletes an object a session's
baseline counts on, while the session is open or between its processes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.store import BackupStore, content_id
from helpers.checkpoints import write
from helpers.cli import only_transcript, run_ok

TWO_HOURS = 2 * 3600


def _bash(command: str) -> str:
    return "call bash " + json.dumps({"command": command})


def _project(workdir: Path, files: int = 40) -> list[Path]:
    return [write(workdir / f"src{index % 4}/file{index}.txt", f"file {index}\n" * 50) for index in range(files)]


def _age_every_object(home: Path) -> None:
    """Makes every store object two hours old: past the GC's one-hour grace, and a re-put
    (reading the file into the store again) would make it young."""
    old = time.time() - TWO_HOURS
    for path in (home / "objects").glob("??/*"):
        os.utime(path, (old, old))


def _object_of(home: Path, path: Path) -> Path:
    return BackupStore(home / "objects").object_path(content_id(path.read_bytes()))


def test_the_next_headless_process_reuses_the_baseline(home: Path, workdir: Path) -> None:
    files = _project(workdir)
    run_ok(["-p", _bash("echo one > made.txt"), "--yolo"], workdir, home)
    session = only_transcript(home, workdir).name[: -len(".jsonl")]
    sidecar = only_transcript(home, workdir).with_name(f"{session}.shell-baseline.json")
    assert len(json.loads(sidecar.read_text())["files"]) == len(files) + 1
    _age_every_object(home)
    untouched = files[7]
    aged = _object_of(home, untouched).stat().st_mtime
    original = files[3].read_bytes()
    run_ok(["-p", _bash(f"rm {files[3].relative_to(workdir)}"), "-r", session, "--yolo"], workdir, home)
    assert _object_of(home, untouched).stat().st_mtime == aged, "the second process read the project again"
    run_ok(["rewind", session, "--to", "2", "--mode", "code", "--yes"], workdir, home)
    assert files[3].read_bytes() == original


def test_gc_keeps_the_baseline_of_an_open_session(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _project(workdir)
    target = files[5]
    original = target.read_bytes()
    monkeypatch.chdir(workdir)
    with AgentSession.start(workdir, permission_mode="bypassPermissions") as agent:
        assert agent.turns.run_turn("just answer").error is None
        manager = agent.turns.checkpoints()
        assert manager is not None and manager.shell is not None
        manager.shell.wait()  # the baseline is taken; no checkpoint names these objects yet
        _age_every_object(home)
        run_ok(["doctor", "--gc"], workdir, home)
        assert _object_of(home, target).exists(), "the GC deleted an object the open session's baseline counts on"
        assert agent.turns.run_turn(_bash(f"rm {target.relative_to(workdir)}")).error is None
    AgentSession.for_reference(agent.session_id).rewinds.rewind(2, RewindMode.CODE)
    assert target.read_bytes() == original


def test_gc_between_processes_keeps_the_baseline(home: Path, workdir: Path) -> None:
    files = _project(workdir)
    run_ok(["-p", _bash("echo one > made.txt"), "--yolo"], workdir, home)
    session = only_transcript(home, workdir).name[: -len(".jsonl")]
    _age_every_object(home)
    run_ok(["doctor", "--gc"], workdir, home)
    assert all(_object_of(home, path).exists() for path in files)
    original = files[9].read_bytes()
    run_ok(["-p", _bash(f"rm {files[9].relative_to(workdir)}"), "-r", session, "--yolo"], workdir, home)
    run_ok(["rewind", session, "--to", "2", "--mode", "code", "--yes"], workdir, home)
    assert files[9].read_bytes() == original
