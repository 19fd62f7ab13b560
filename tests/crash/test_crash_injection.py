"""Crash injection in CI: the harness of `benches/crash_harness.py` with a small budget.

Real `commandcode` processes are SIGKILLed at random moments (a random delay, or a random
Python-level write, fsync or rename, sometimes mid-write) while appending a turn, writing a new
session, backing files up, restoring a rewind and updating meta; after each kill every session
must open, every reported turn must be there, no line may be glued, every object must verify, and
the project must be wholly before or after the rewind (see `tests/helpers/crash_harness.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import crash_harness as harness
from helpers.checkpoints import fill_disk
from helpers.crash_runs import SETTLE_POINTS

POINTS_PER_OPERATION = 8  # 40 points in all; the bench runs 1,000+


def _run(tmp_path: Path, index: bool) -> dict:
    results = [harness.run_lane(operation, tmp_path / operation, POINTS_PER_OPERATION, 20260102, index)
               for operation in harness.OPERATIONS]
    return harness.report(results, seed=20260102, index=index, elapsed=0.0)


def _assert_clean(report: dict) -> None:
    assert report["violation_list"] == []
    for operation, stats in report["operations"].items():
        assert stats["killed"] >= POINTS_PER_OPERATION // 2, (operation, stats)
        assert stats["survived"] == stats["killed"], (operation, stats)


@pytest.mark.slow
def test_kill_9_at_random_points_breaks_no_promise(tmp_path: Path) -> None:
    _assert_clean(_run(tmp_path, index=False))


@pytest.mark.slow
@pytest.mark.skipif(not harness.index_supported(), reason="_native.scan_session takes no index path yet "
                    "(engineer A's index sidecars); rerun with the index on once it does")
def test_kill_9_with_the_index_sidecars_on(tmp_path: Path) -> None:
    _assert_clean(_run(tmp_path, index=True))


@pytest.mark.slow
@pytest.mark.parametrize("point", SETTLE_POINTS)
def test_kill_9_in_a_restore_settle_breaks_no_promise(tmp_path: Path, point: str) -> None:
    """Rewinds killed in the settle after their commit returned (before the flush, before the
    journal's removal, after it): every check holds, and recovery leaves no journal, copy or temp."""
    result = harness.run_lane("rewind", tmp_path / point, 6, 20261206, False, mode=point)
    report = harness.report([result], seed=20261206, index=False, elapsed=0.0)
    assert report["violation_list"] == []
    stats = report["operations"]["rewind"]
    assert stats["kill_modes"].get(point, 0) >= 3, stats
    assert stats["survived"] == stats["killed"], stats


# --------------------------------------------------------------------------------------------
# Disk full: the same operations on a 1 MiB tmpfs


def _one_clear_outcome(completed: subprocess.CompletedProcess[str], what: str) -> bool:
    """Success, or exit 1 with one `error:` line (and at most a hint); never a traceback."""
    assert "Traceback" not in completed.stderr, (what, completed.stderr)
    if completed.returncode == 0:
        return True
    lines = [line for line in completed.stderr.splitlines() if not line.startswith("warning: ")]
    assert completed.returncode == 1 and 1 <= len(lines) <= 2, (what, completed.stderr)
    assert lines[0].startswith("error: ") and (len(lines) == 1 or lines[1].startswith("hint: ")), (what, completed.stderr)
    return False


@pytest.mark.parametrize("index", [False, pytest.param(True, marks=pytest.mark.skipif(
    not harness.index_supported(), reason="_native.scan_session takes no index path yet (index sidecars)"))])
def test_disk_full_each_operation_fails_cleanly_and_works_once_space_is_freed(tmp_path: Path, index: bool) -> None:
    from helpers.checkpoints import small_tmpfs

    with small_tmpfs(tmp_path / "small", "1m") as mount:
        data = mount / "home" / ".commandcode"
        project = mount / "project"
        project.mkdir()
        (project / "big.txt").write_text("VERSION 0\n" + "x" * 200_000)
        env = {**harness.python_path_env(), "COMMANDCODE_HOME": str(data), "COMMANDCODE_INDEX": "on" if index else "off",
               "NO_COLOR": "1"}

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=project, env={**os.environ, **env},
                                  capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)

        committed: list[str] = []

        def turn(marker: str, *extra: str) -> subprocess.CompletedProcess[str]:
            return cli("-p", marker, *extra, "--output-format", "json")

        first = turn("committed-0")
        assert first.returncode == 0, first.stderr
        session = json.loads(first.stdout)["session_id"]
        committed.append("committed-0")
        edit = ('call edit_file {"file_path": "big.txt", "old_string": "VERSION %d", "new_string": "VERSION %d"}')
        assert turn("committed-1\n" + edit % (0, 1), "-r", session).returncode == 0
        committed.append("committed-1")

        operations = {
            "append": lambda n: turn(f"full-append-{n}", "-r", session),
            "first_write": lambda n: turn(f"full-first-{n}"),
            "backup": lambda n: turn(f"full-backup-{n}\n" + edit % (n, n + 1), "-r", session),
            "rewind": lambda n: cli("rewind", session, "--to", "2", "--mode", "code", "--yes", "--force"),
            "meta": lambda n: turn(f"full-meta-{n}", "-r", session, "-n", f"name {n}"),
        }
        failed = {}
        for step, (name, operation) in enumerate(operations.items(), start=1):
            fill_disk(mount)
            version = int((project / "big.txt").read_text()[8:].split("\n", 1)[0]) if step else 0
            outcome = operation(version)
            failed[name] = not _one_clear_outcome(outcome, f"{name} on a full disk")
            _assert_committed_intact(data, session, committed)
            for stale in mount.glob("filler*"):
                stale.unlink()
            again = operation(int((project / "big.txt").read_text()[8:].split("\n", 1)[0]))
            assert again.returncode == 0, (name, "after freeing space", again.stderr)
            if name != "rewind":
                marker = json.loads(again.stdout)
                assert marker["type"] == "result"
                if marker["session_id"] == session:
                    committed.append(f"full-{name}-")
            _assert_committed_intact(data, session, committed)
        assert all(failed.values()), f"every operation must have met the full disk and refused: {failed}"


def _assert_committed_intact(data: Path, session: str, committed: list[str]) -> None:
    from commandcode.sessions.reader import open_session

    with harness.data_dir_env(data, index=False):
        [transcript] = [path for path in data.glob(f"projects/*/{session}.jsonl")]
        texts = "\n".join(block.get("text", "") for message in open_session(transcript).context().messages
                          for block in message.get("content", []) if isinstance(block, dict))
        for marker in committed:
            assert marker in texts, f"committed turn {marker} was lost"
        for path in data.glob("projects/*/*.meta.json"):
            assert isinstance(json.loads(path.read_text()), dict)
        for path in data.glob("projects/*/*.checkpoints.jsonl"):
            for line in path.read_text().split("\n"):
                if line.strip():  # a hidden line (`#` + JSON: a rewound-past checkpoint or a redo point) too
                    json.loads(line[1:] if line.startswith("#") else line)


def _two_turn_session(project: Path):  # type: ignore[no-untyped-def]
    from commandcode.checkpoints.manager import CheckpointManager
    from helpers.checkpoints import new_session_files

    target = project / "a.txt"
    target.write_text("one\n")
    files = new_session_files(project)
    manager = CheckpointManager.for_session(files, project)
    for turn, text in enumerate(("two\n", "three\n"), start=1):
        manager.open_checkpoint(f"turn {turn}", turn * 2, None)
        manager.backup_before_edit(str(target))
        target.write_text(text)
        manager.record_after_edit(str(target))
    manager.flush()
    return files, target


def test_a_crash_between_the_restore_and_the_checkpoints_update_is_not_an_outside_edit(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The after-digests of a code rewind are written in the same journaled step as the files, so
    a process killed the moment the native restore returns leaves records that know the restored
    state (before the fix the next rewind was refused as `changed outside`)."""
    from commandcode.checkpoints import store as backups
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.rewind import rewind
    from commandcode.errors import ChangedOutsideError

    project = (tmp_path / "project").resolve()
    project.mkdir()
    files, target = _two_turn_session(project)

    class Killed(BaseException):
        pass

    real_commit = backups.PreparedRestore.commit  # a rewind's restore commits here (verified once, #30)

    def commit_then_die(*args: object, **kwargs: object) -> object:
        real_commit(*args, **kwargs)  # type: ignore[arg-type]
        raise Killed  # the process dies right after the restore committed

    monkeypatch.setattr(backups.PreparedRestore, "commit", commit_then_die)
    with pytest.raises(Killed):
        rewind(files, project, 2, RewindMode.CODE)
    assert target.read_text() == "two\n"  # the restore itself committed
    monkeypatch.setattr(backups.PreparedRestore, "commit", real_commit)
    try:
        rewind(files, project, 1, RewindMode.CODE)
    except ChangedOutsideError as error:
        raise AssertionError(f"our own restore was taken for an outside edit: {error}") from None
    assert target.read_text() == "one\n"


def test_a_failed_restore_puts_the_checkpoints_file_back_with_the_files(home: Path, tmp_path: Path) -> None:
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.rewind import RewindOptions, rewind
    from commandcode.errors import RestoreError

    project = (tmp_path / "project").resolve()
    project.mkdir()
    files, target = _two_turn_session(project)
    records_before = files.checkpoints.read_bytes()
    # Step 0 is the file, step 1 the checkpoints file: fail after the file was swapped in.
    with pytest.raises(RestoreError, match="injected failure"):
        rewind(files, project, 1, RewindMode.CODE, RewindOptions(faults={"fail_before_step": 1}))
    assert target.read_text() == "three\n"
    assert files.checkpoints.read_bytes() == records_before
    rewind(files, project, 1, RewindMode.CODE)
    assert target.read_text() == "one\n"
    assert files.checkpoints.read_bytes() != records_before
