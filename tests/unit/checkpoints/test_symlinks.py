"""Symlinks and symlink races: backups never follow a symlink (they skip it, with a warning), a
restore refuses a target or parent folder that became a symlink after it was planned, and never
writes, deletes or replaces anything through one; commandcode's own files are never written
through a symlink (`O_NOFOLLOW`, or the link itself replaced)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from commandcode.checkpoints import store as backups
from commandcode.checkpoints.manager import CheckpointManager
from commandcode.errors import RestoreError
from helpers.checkpoints import new_session_files
from helpers.cli import run_cli


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "target.txt").write_text("outside, never touched\n")
    return folder


def _ok(args: list[str], cwd: Path, data: Path) -> str:
    completed = run_cli(args, cwd, data)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def _session(data: Path, cwd: Path) -> str:
    (cwd / "a.txt").write_text("before\n")
    (cwd / "dir").mkdir()
    (cwd / "dir" / "b.txt").write_text("before b\n")
    first = json.loads(_ok(["-p", "start", "--output-format", "json"], cwd, data))["session_id"]
    prompt = "\n".join(f"call edit_file {json.dumps({'file_path': name, 'old_string': 'before', 'new_string': 'after'})}"
                       for name in ("a.txt", "dir/b.txt"))
    _ok(["-p", prompt, "-r", first], cwd, data)
    return first


def test_a_backup_of_a_symlink_is_skipped_with_a_warning(home: Path, workdir: Path, outside: Path) -> None:
    (workdir / "link.txt").symlink_to(outside / "target.txt")
    completed = run_cli(["-p", 'call edit_file {"file_path": "link.txt", "old_string": "never", "new_string": "now"}',
                         "--output-format", "json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    warnings = [line for line in completed.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "link.txt is a symlink; it was not followed or backed up" in warnings[0]
    [checkpoints] = list((home / "projects").glob("*/*.checkpoints.jsonl"))
    [item] = json.loads(checkpoints.read_text().split("\n")[-1])["files"]
    assert (item["hash"], item["skipped"]) == (None, "symlink")
    stored = [path for path in (home / "objects").rglob("*") if path.is_file() and len(path.name) == 62]
    assert stored == [], "nothing behind the symlink may be stored"


def test_a_target_that_became_a_symlink_after_planning_is_refused(home: Path, workdir: Path, outside: Path) -> None:
    session = _session(home, workdir)
    dry = _ok(["rewind", session, "--to", "2", "--mode", "code", "--dry-run"], workdir, home)
    assert "restore    a.txt" in dry
    (workdir / "a.txt").unlink()
    (workdir / "a.txt").symlink_to(outside / "target.txt")
    completed = run_cli(["rewind", session, "--to", "2", "--mode", "code", "--yes", "--force"], workdir, home)
    assert completed.returncode == 1
    assert completed.stderr.splitlines()[0].endswith("a.txt is a symlink (never followed)")
    assert (outside / "target.txt").read_text() == "outside, never touched\n"
    assert os.readlink(workdir / "a.txt") == str(outside / "target.txt")
    assert (workdir / "dir" / "b.txt").read_text() == "after b\n", "all or nothing: no other file was restored"


def test_a_parent_folder_that_became_a_symlink_after_planning_is_refused(home: Path, workdir: Path,
                                                                        outside: Path) -> None:
    session = _session(home, workdir)
    _ok(["rewind", session, "--to", "2", "--mode", "code", "--dry-run"], workdir, home)
    (outside / "b.txt").write_text("outside b\n")
    (workdir / "dir").rename(workdir / "dir.moved")
    (workdir / "dir").symlink_to(outside, target_is_directory=True)
    completed = run_cli(["rewind", session, "--to", "2", "--mode", "code", "--yes", "--force"], workdir, home)
    assert completed.returncode == 1
    assert "b.txt is outside" in completed.stderr.splitlines()[0]
    assert (outside / "b.txt").read_text() == "outside b\n"
    assert (workdir / "a.txt").read_text() == "after\n"


def test_a_parent_folder_swapped_for_a_symlink_during_the_restore_is_not_followed(home: Path, tmp_path: Path) -> None:
    project = (tmp_path / "project").resolve()
    outside = (tmp_path / "outside").resolve()
    (project / "dir").mkdir(parents=True)
    outside.mkdir()
    (project / "a.txt").write_text("a before\n")
    (outside / "victim.txt").write_text("outside, never touched\n")
    files = new_session_files(project)
    manager = CheckpointManager.for_session(files, project)
    manager.open_checkpoint("turn", 0, None)
    manager.backup_before_edit(str(project / "a.txt"))
    (project / "a.txt").write_text("a after\n")
    manager.backup_before_edit(str(project / "dir" / "victim.txt"))  # created by the turn: a rewind deletes it
    (project / "dir" / "victim.txt").write_text("made by the turn\n")
    manager.flush()
    records = manager.records
    from commandcode.checkpoints.rewind_code import plan_code

    plan = plan_code(records, 0, project, files)
    journal = backups.journal_path(files.session_id)

    def swap() -> None:
        deadline = time.monotonic() + 10
        while not journal.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.3)  # inside the first step's delay: staging is done, nothing applied yet
        (project / "dir").rename(project / "dir.moved")
        (project / "dir").symlink_to(outside, target_is_directory=True)

    swapper = threading.Thread(target=swap)
    swapper.start()
    with pytest.raises(RestoreError) as refused:
        backups.restore_files(backups.BackupStore(), plan.targets, session_id=files.session_id, confine_to=project,
                              force=True, step_delay_ms=800)
    swapper.join()
    assert "is no longer the folder that was checked" in str(refused.value)
    assert (outside / "victim.txt").read_text() == "outside, never touched\n"
    # Refused and rolled back: the step already applied is undone, the moved folder untouched.
    assert (project / "a.txt").read_text() == "a after\n"
    assert (project / "dir.moved" / "victim.txt").read_text() == "made by the turn\n"
    assert sorted(path.name for path in project.rglob("*")) == ["a.txt", "dir", "dir.moved", "victim.txt"]
    assert not backups.journal_path(files.session_id).exists()


def test_our_own_files_are_never_written_through_a_symlink(home: Path, workdir: Path, outside: Path) -> None:
    from commandcode.sessions.history import record_prompt

    session = _session(home, workdir)
    record_prompt("an interactive prompt")  # -p writes no history; the shell does
    [folder] = list((home / "projects").iterdir())
    transcript = folder / f"{session}.jsonl"
    for suffix in (".meta.json", ".checkpoints.jsonl"):
        sidecar = folder / f"{session}{suffix}"
        copy = outside / f"copy{suffix}"
        copy.write_bytes(sidecar.read_bytes())
        sidecar.unlink()
        sidecar.symlink_to(copy)
    history = home / "history.jsonl"
    (outside / "history.jsonl").write_bytes(history.read_bytes())
    history.unlink()
    history.symlink_to(outside / "history.jsonl")
    before = {path.name: path.read_bytes() for path in outside.iterdir()}
    _ok(["-p", "a turn that renames", "-r", session, "-n", "renamed"], workdir, home)
    assert {path.name: path.read_bytes() for path in outside.iterdir()} == before
    assert not (folder / f"{session}.meta.json").is_symlink()  # the link itself was replaced
    assert json.loads((folder / f"{session}.meta.json").read_text())["title"] == "renamed"

    # The transcript: appending through a symlink is refused (O_NOFOLLOW), with one line.
    (outside / "transcript.jsonl").write_bytes(transcript.read_bytes())
    transcript.unlink()
    transcript.symlink_to(outside / "transcript.jsonl")
    before = (outside / "transcript.jsonl").read_bytes()
    completed = run_cli(["-p", "through the link", "-r", session], workdir, home)
    assert completed.returncode == 1
    assert completed.stderr.splitlines()[0].startswith("error: ")
    assert "Traceback" not in completed.stderr and len(completed.stderr.splitlines()) <= 2
    assert (outside / "transcript.jsonl").read_bytes() == before
