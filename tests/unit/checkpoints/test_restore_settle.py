"""A restore's settle (the flush and the journal's removal, on a native thread once every target
holds its new bytes, `rust/src/store/restore/settle.rs`): the commit waits for it
(`checkpoints/store.py` says why), and another process that wants the journal meanwhile waits a
short settle out and is refused a long one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from commandcode.checkpoints import store as backups
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.rewind import redo, rewind
from helpers.checkpoints import snapshot
from helpers.crash_rewind import child_environment, prepare

RECOVER_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from commandcode.checkpoints import store as backups
    from commandcode.errors import RestoreError
    from commandcode.sessions.files import SessionFiles
    directory, session_id, project = sys.argv[1:4]
    try:
        backups.recover_pending(SessionFiles(Path(directory), session_id), Path(project))
    except RestoreError as error:
        print("error:", error)
    else:
        print("recovered")
    """
)


def test_a_rewind_returns_once_its_restore_settled(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewind returns with its journal gone (the callers' writes after the commit must never
    race an open journal whose recovery would undo them); the redo right after it works."""
    monkeypatch.setenv("COMMANDCODE_TEST_SETTLE_PAUSE_MS", "400")  # held past the lock's 0.5 s patience
    project = tmp_path / "project"
    project.mkdir()
    files, restored_state, edited_state = prepare(project)
    journal = home / "journals" / f"{files.session_id}.json"  # type: ignore[attr-defined]
    rewind(files, project, 1, RewindMode.CODE)
    assert not journal.exists(), "the rewind returned before its settle"
    assert snapshot(project) == restored_state
    redo(files, project)
    assert snapshot(project) == edited_state
    assert backups.settle_restores() == []
    assert not journal.exists()


@pytest.mark.parametrize(("pause_ms", "expected"), [(60, "recovered"), (3000, "error:")])
def test_another_process_waits_a_short_settle_out_and_is_refused_a_long_one(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pause_ms: int, expected: str
) -> None:
    monkeypatch.setenv("COMMANDCODE_TEST_SETTLE_PAUSE_MS", str(pause_ms))
    project = tmp_path / "project"
    project.mkdir()
    files, restored_state, _ = prepare(project)
    child = subprocess.Popen(
        [sys.executable, "-c", f"import sys; sys.stdin.readline()\n{RECOVER_SCRIPT}", str(files.directory),  # type: ignore[attr-defined]
         files.session_id, str(project)],  # type: ignore[attr-defined]
        env=child_environment(home), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    journal = home / "journals" / f"{files.session_id}.json"  # type: ignore[attr-defined]

    def go_once_the_restore_began() -> None:  # the child recovers while the restore holds the lock
        while not journal.exists():
            time.sleep(0.0005)
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()

    starter = threading.Thread(target=go_once_the_restore_began, daemon=True)
    starter.start()
    rewind(files, project, 1, RewindMode.CODE)
    starter.join(timeout=60)
    stdout, stderr = child.communicate(timeout=120)
    assert stdout.startswith(expected), (stdout, stderr)
    if expected == "error:":
        assert "another restore is running for this session" in stdout and len(stdout.splitlines()) == 1
    assert backups.settle_restores() == []
    assert snapshot(project) == restored_state


def test_a_failed_settle_is_one_warning_line_at_exit(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A settle whose flush failed (EIO) leaves its journal for the next open; the exit handler
    says so in one line, never a traceback."""
    monkeypatch.setattr(backups._native, "settle_restores", lambda journal=None: [("/d/journals/s.json", "Input/output error")])
    backups.settle_and_warn()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: a restore could not be flushed to disk (Input/output error)")
    assert "/d/journals/s.json" in lines[0]
