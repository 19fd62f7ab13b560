"""A rewind's redo point stores its new objects in one pack (`store/packs.rs`): one file and its
folder flushed, not an fsync of each object and of its folder (nor a temp, a rename and a `syncfs`
pair for a batch of them). Counted with `strace` on a real child process; the restore must still
put back every byte."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from commandcode.checkpoints.store import BackupStore
from helpers.checkpoints import snapshot
from helpers.crash_rewind import FILES, REWIND_SCRIPT, child_environment, prepare

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")


def _traced_rewind(home: Path, project: Path, files: object, log: Path) -> subprocess.CompletedProcess[str]:
    command = ["strace", "-f", "-qq", "-y", "-e", "trace=fsync,fdatasync,syncfs", "-o", str(log),
               sys.executable, "-c", REWIND_SCRIPT, str(files.directory), files.session_id,  # type: ignore[attr-defined]
               str(project), "step_delay_ms", "0"]
    return subprocess.run(command, env=child_environment(home), capture_output=True, text=True, timeout=300)


def test_the_redo_point_of_a_rewind_is_flushed_once_not_per_object(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    files, restored_state, _ = prepare(project)
    objects_before = sum(1 for _ in (home / "objects").glob("??/*"))
    packed_before = len(BackupStore(home / "objects").packed_ids())
    log = tmp_path / "trace"
    completed = _traced_rewind(home, project, files, log)
    if completed.returncode != 0 and not log.exists():
        pytest.skip(f"strace cannot trace here: {completed.stderr.strip()[:200]}")
    assert completed.returncode == 0, completed.stderr
    assert snapshot(project) == restored_state
    assert sum(1 for _ in (home / "objects").glob("??/*")) == objects_before, "no loose object: one pack"
    new_objects = len(BackupStore(home / "objects").packed_ids()) - packed_before
    assert new_objects >= FILES * 3 // 4, "the turn's edits are new bytes: the redo point stores them"
    calls = [line for line in log.read_text().splitlines() if "(" in line and "resumed" not in line]
    store = f"<{home / 'objects'}/"  # `-y` names each descriptor's file: fsyncs of our object store
    fsyncs = sum(1 for line in calls if ("fsync(" in line or "fdatasync(" in line) and store in line)
    syncfs = sum(1 for line in calls if "syncfs(" in line)
    # before the batch: an fsync of every new object and one of its folder (2 x new_objects)
    assert fsyncs <= 3, (fsyncs, new_objects)  # the pack's, its folder's, the store's when `packs/` is new
    assert syncfs == 1, syncfs  # the restore's (a batch of loose objects added two)
