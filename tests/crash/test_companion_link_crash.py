"""Crash test: a rewind killed with SIGKILL while its checkpoints file (the restore's companion) is
staged as a hard link of the durable copy beside the journal, or already exchanged into place
sharing that copy's inode (`rust/src/store/restore/apply.rs`, `stage_one`).

The next open must complete the restore: the project wholly as checkpoint 1 had it, the
checkpoints file whole (every line JSON, hidden or not) and with one link (the copy removed, never left sharing
its inode), no copy, no journal, no temp beside the checkpoints file."""

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

from commandcode.checkpoints.manager import CheckpointManager
from helpers.checkpoints import snapshot
from helpers.crash_rewind import REWIND_SCRIPT, child_environment, prepare


def _linked_to_copy(copy: Path, folder: Path, name: str, *, staged: bool) -> bool:
    """Whether the companion's staged temp (`staged`), or the checkpoints file itself, is now the
    copy's inode."""
    try:
        inode = copy.stat().st_ino
        if not staged:
            return (folder / name).stat().st_ino == inode
        return any(entry.name.startswith(f".{name}.") and entry.name.endswith(".cctmp")
                   and entry.stat(follow_symlinks=False).st_ino == inode for entry in os.scandir(folder))
    except FileNotFoundError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("staged", [True, False], ids=["staged-link", "exchanged"])
def test_kill_9_with_the_companion_linked_to_its_copy_completes(home: Path, tmp_path: Path, staged: bool) -> None:
    rng = random.Random(20261205 + staged)
    environment = child_environment(home)
    landed = 0
    for attempt in range(4):
        project = tmp_path / f"project{attempt}"
        project.mkdir()
        files, restored_state, _ = prepare(project)
        checkpoints = files.checkpoints  # type: ignore[attr-defined]
        copy = home / "journals" / f"{files.session_id}.json.companion"  # type: ignore[attr-defined]
        process = subprocess.Popen(
            [sys.executable, "-c", REWIND_SCRIPT, str(files.directory), files.session_id,  # type: ignore[attr-defined]
             str(project), "step_delay_ms", "15"],
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
        while process.poll() is None and not _linked_to_copy(copy, checkpoints.parent, checkpoints.name,
                                                               staged=staged):
            time.sleep(0.0005)
        time.sleep(rng.uniform(0.0, 0.01))
        process.send_signal(signal.SIGKILL)
        process.wait()
        landed += process.returncode == -signal.SIGKILL
        CheckpointManager.for_session(files, project)  # the next open completes the restore
        assert snapshot(project) == restored_state, f"attempt {attempt}: not wholly restored"
        lines = checkpoints.read_bytes().splitlines()
        assert lines and all(json.loads(line.removeprefix(b"#")) for line in lines)  # `#`: a hidden line
        assert checkpoints.stat().st_nlink == 1
        assert not copy.exists()
        assert not (home / "journals" / f"{files.session_id}.json").exists()  # type: ignore[attr-defined]
        assert not [name for name in os.listdir(checkpoints.parent) if name.endswith(".cctmp")]
    assert landed >= 3, landed
