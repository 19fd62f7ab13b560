"""Crash test: a rewind killed with SIGKILL in its settle, the part of a restore that runs on a
native thread once every target holds its new bytes, behind the caller
(`rust/src/store/restore/settle.rs`, `checkpoints/settling.py`): before its flush,
after the flush and before the removals, between the companion copy's removal and the journal's,
and after that removal (while the trash is freed and the process exits). The test hook
`COMMANDCODE_TEST_SETTLE_PAUSE_MS` holds the settle before its flush and before, between and
after the removals, so each kill lands where it is aimed.

Until the removal, the journal is open: the next open must complete the restore from its
durable sources. After it, the files are durable. Either way the project must be exactly the
restored tree, the checkpoints file whole with one link, and nothing left behind: no journal,
no companion copy, no temp, and (after the next restore) no trash folder."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from commandcode.checkpoints import store as backups
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.rewind import redo
from helpers.checkpoints import snapshot
from helpers.crash_rewind import REWIND_SCRIPT, child_environment, prepare

PAUSE_MS = 300


def _journals(home: Path) -> list[str]:
    folder = home / "journals"
    return sorted(os.listdir(folder)) if folder.is_dir() else []


def _wait_for_the_commit(process: subprocess.Popen[bytes], copy: Path, checkpoints: Path) -> None:
    """Until every target holds its new bytes: the checkpoints file (the companion, the last step
    applied) is the companion's copy beside the journal, exchanged into place."""
    while process.poll() is None:
        try:
            if copy.stat().st_ino == checkpoints.stat().st_ino:
                return
        except FileNotFoundError:
            pass
        time.sleep(0.0005)


def _wait_for_trash_removal(home: Path) -> None:
    deadline = time.monotonic() + 60
    while any(name.endswith(".trash") for name in _journals(home)):
        assert time.monotonic() < deadline, _journals(home)
        time.sleep(0.005)


@pytest.mark.slow
@pytest.mark.parametrize("point", ["before_flush", "before_removal", "between_removals", "after_removal"])
def test_kill_9_in_the_settle_leaves_exactly_the_restored_tree(home: Path, tmp_path: Path, point: str) -> None:
    rng = random.Random(f"settle:{point}")
    environment = child_environment(home, COMMANDCODE_TEST_SETTLE_PAUSE_MS=str(PAUSE_MS))
    pause = PAUSE_MS / 1000
    landed = 0
    for attempt in range(3):
        project = tmp_path / f"project{attempt}"
        project.mkdir()
        files, restored_state, _ = prepare(project)
        journal = home / "journals" / f"{files.session_id}.json"  # type: ignore[attr-defined]
        copy = journal.with_name(journal.name + ".companion")
        process = subprocess.Popen(
            [sys.executable, "-c", REWIND_SCRIPT, str(files.directory), files.session_id,  # type: ignore[attr-defined]
             str(project), "step_delay_ms", "0"],
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
        _wait_for_the_commit(process, copy, files.checkpoints)  # type: ignore[attr-defined]
        if point == "before_flush":
            time.sleep(rng.uniform(0.0, pause * 0.6))
        elif point == "before_removal":
            time.sleep(pause + rng.uniform(pause * 0.3, pause * 0.8))
        elif point == "between_removals":  # the copy gone, the journal open: the file's own bytes serve
            while copy.exists() and process.poll() is None:
                time.sleep(0.0005)
            time.sleep(rng.uniform(0.0, pause * 0.6))
        else:
            while journal.exists() and process.poll() is None:
                time.sleep(0.0005)
            time.sleep(rng.uniform(0.0, 0.003))
        pending = journal.exists()
        process.send_signal(signal.SIGKILL)
        process.wait()
        landed += process.returncode == -signal.SIGKILL
        if point != "after_removal":
            assert pending, f"attempt {attempt}: the kill came after the settle"
            assert json.loads(journal.read_text())["state"] == "open"
        CheckpointManager.for_session(files, project)  # the next open completes an open journal
        assert snapshot(project) == restored_state, f"attempt {attempt}: not exactly the restored tree"
        checkpoints = files.checkpoints  # type: ignore[attr-defined]
        lines = checkpoints.read_bytes().splitlines()
        assert lines and all(json.loads(line.removeprefix(b"#")) for line in lines)  # `#`: a hidden line
        assert checkpoints.stat().st_nlink == 1
        assert not journal.exists() and not copy.exists()
        assert not [name for name in _journals(home) if name.endswith(".cctmp")]
        assert not [name for name in os.listdir(checkpoints.parent) if name.endswith(".cctmp")]
        # The next restore (the redo) sweeps a trash folder the kill left; its own goes once settled.
        redo(files, project)
        assert not backups.settle_restores()
        _wait_for_trash_removal(home)
        assert [name for name in _journals(home) if not name.endswith(".lock")] == []
    assert landed >= 2, landed


def test_the_exit_waits_for_the_settle(home: Path, tmp_path: Path) -> None:
    """A process that returns from a rewind and exits at once leaves no journal: the exit handler
    waits for the settle (without it, the exit would cut the paused settle short)."""
    project = tmp_path / "project"
    project.mkdir()
    files, restored_state, _ = prepare(project)
    environment = child_environment(home, COMMANDCODE_TEST_SETTLE_PAUSE_MS="150")
    finished = subprocess.run(
        [sys.executable, "-c", REWIND_SCRIPT, str(files.directory), files.session_id,  # type: ignore[attr-defined]
         str(project), "step_delay_ms", "0"],
        env=environment, capture_output=True, timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.split() == [b"ready", b"done"] and finished.stderr == b""
    journal = home / "journals" / f"{files.session_id}.json"  # type: ignore[attr-defined]
    assert not journal.exists() and not journal.with_name(journal.name + ".companion").exists()
    assert snapshot(project) == restored_state
