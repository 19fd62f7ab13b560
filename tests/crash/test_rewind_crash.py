"""Crash test: a restore runs in a real subprocess and is killed with SIGKILL at random moments;
the next open (`CheckpointManager.for_session`) must leave the tree wholly as it was before the
restore or wholly as the checkpoint had it, with no stray temp files."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import commandcode
from commandcode.checkpoints import store as backups
from commandcode.checkpoints.manager import CheckpointManager
from helpers.checkpoints import snapshot
from helpers.crash_rewind import REWIND_SCRIPT, child_environment, prepare


@pytest.mark.slow
def test_kill_9_at_random_moments_leaves_the_tree_wholly_before_or_after(home: Path, tmp_path: Path) -> None:
    rng = random.Random(20260102)
    environment = child_environment(home)
    outcomes = {"before": 0, "after": 0}
    interrupted = 0
    for attempt in range(12):
        project = tmp_path / f"project{attempt}"
        project.mkdir()
        files, restored_state, edited_state = prepare(project)
        delay = rng.choice([0, 1, 2])
        process = subprocess.Popen(
            [sys.executable, "-c", REWIND_SCRIPT, str(files.directory), files.session_id, str(project), "step_delay_ms",
             str(delay)],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        assert process.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.0, 0.05 + delay * 0.2))
        process.send_signal(signal.SIGKILL)
        process.wait()
        pending = (home / "journals" / f"{files.session_id}.json").exists()
        CheckpointManager.for_session(files, project)  # the next open completes or rolls back
        interrupted += pending
        tree = snapshot(project)
        if tree == edited_state:
            outcomes["before"] += 1
        else:
            assert tree == restored_state, f"attempt {attempt}: the tree is half restored"
            outcomes["after"] += 1
        stray = [name for name in tree if any(part.startswith(".") for part in Path(name).parts)]
        assert not stray, stray
    assert sum(outcomes.values()) == 12
    assert interrupted >= 2, "the kills should land inside restores, not only around them"


def _kill_midway(home: Path, project: Path) -> tuple[object, dict, dict, Path, dict[str, str]]:
    """Runs a slow code rewind in a subprocess and SIGKILLs it once it has begun changing files.
    Returns the session files, both whole states, the journal and the CLI environment."""
    environment = child_environment(home, NO_COLOR="1")
    files, restored_state, edited_state = prepare(project)
    journal = home / "journals" / f"{files.session_id}.json"
    process = subprocess.Popen(
        [sys.executable, "-c", REWIND_SCRIPT, str(files.directory), files.session_id, str(project), "step_delay_ms", "20"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
    deadline = time.monotonic() + 60
    while snapshot(project) == edited_state and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert journal.exists() and snapshot(project) not in (edited_state, restored_state)
    return files, restored_state, edited_state, journal, environment


def _list_checkpoints(files: object, project: Path, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "commandcode", "checkpoints", "list", str(files.checkpoints)],  # type: ignore[attr-defined]
        env=environment, cwd=project, capture_output=True, text=True, timeout=120,
    )


def test_a_restore_killed_midway_is_finished_by_the_next_command_which_says_so(home: Path, tmp_path: Path) -> None:
    """Files overwritten in place cannot be undone after a crash, so the journal names where every
    new content comes from and the next command completes the restore, with a warning."""
    project = tmp_path / "project"
    project.mkdir()
    files, restored_state, _, journal, environment = _kill_midway(home, project)
    listed = _list_checkpoints(files, project, environment)
    assert listed.returncode == 0, listed.stderr
    assert "warning: finished a restore of session" in listed.stderr and "interrupted" in listed.stderr, listed.stderr
    assert snapshot(project) == restored_state
    assert not journal.exists()


def test_an_interrupted_restore_missing_a_backup_keeps_its_journal_until_it_can_finish(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    files, restored_state, _, journal, environment = _kill_midway(home, project)
    ops = json.loads(journal.read_text())["ops"]
    # the journal names each write's durable source: an object of our store, or (compatible backups,
    # issue 32) the item's raw sha256 blob in file-history/
    last_write = [op for op in ops if op["action"] == "write" and op["source"]
                  and ("object" in op["source"] or "blob" in op["source"])][-1]
    source = last_write["source"]
    object_path = (backups.BackupStore().object_path(source["object"]) if "object" in source
                   else Path(source["blob"]) / source["sha256"])
    saved = object_path.read_bytes()
    object_path.unlink()
    failed = _list_checkpoints(files, project, environment)
    assert failed.returncode == 1
    lines = failed.stderr.strip().splitlines()
    assert lines[0].startswith("error: cannot finish the restore a crash interrupted: backup"), failed.stderr
    assert "delete the journal" in lines[0] and len(lines) <= 2, failed.stderr
    assert journal.exists()
    object_path.write_bytes(saved)
    listed = _list_checkpoints(files, project, environment)
    assert listed.returncode == 0, listed.stderr
    assert snapshot(project) == restored_state
    assert not journal.exists()
