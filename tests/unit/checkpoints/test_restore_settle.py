"""A restore's settle (the flush and the journal's removal, on a native thread once every target
holds its new bytes, `rust/src/store/restore/settle.rs`): the commit returns before it; what waits
for it in this process (`checkpoints/settling.py`), what a failed one stops, and what another
process that wants the journal meanwhile sees (a short settle waited out, a long one refused)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from commandcode.agent.tools import run_tool
from commandcode.checkpoints import settling
from commandcode.checkpoints import store as backups
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.records import write_checkpoints_data
from commandcode.checkpoints.rewind import redo, rewind
from commandcode.errors import CheckpointError, RestoreError
from commandcode.sessions.files import SessionFiles
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


def _watch_while_settling(journal: Path, checkpoints: Path) -> tuple[threading.Thread, set[bytes]]:
    """A thread that reads the checkpoints file for as long as the journal is open."""
    seen: set[bytes] = set()

    def watch() -> None:
        while journal.exists():
            seen.add(checkpoints.read_bytes())
            time.sleep(0.001)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher, seen


def test_a_rewind_returns_before_its_settle_and_a_checkpoints_write_waits_for_it(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rewind returns with its settle still running (its journal open); the next write of the
    session's checkpoints file waits for that settle, so while the journal is open the file holds
    exactly the companion's bytes, the ones its recovery would write (a write before the journal's
    removal would be undone by that recovery, or leave it unable to finish)."""
    monkeypatch.setenv("COMMANDCODE_TEST_SETTLE_PAUSE_MS", "300")
    project = tmp_path / "project"
    project.mkdir()
    files, restored_state, _ = prepare(project)
    checkpoints = files.checkpoints  # type: ignore[attr-defined]
    journal = home / "journals" / f"{files.session_id}.json"  # type: ignore[attr-defined]
    rewind(files, project, 1, RewindMode.CODE)
    assert journal.exists(), "the rewind waited for its settle"
    assert snapshot(project) == restored_state
    companion = checkpoints.read_bytes()
    watcher, seen = _watch_while_settling(journal, checkpoints)
    write_checkpoints_data(checkpoints, companion + b"\n")
    assert not journal.exists(), "the write did not wait for the settle"
    watcher.join(timeout=60)
    assert seen <= {companion}, "the checkpoints file changed while the journal was open"
    assert checkpoints.read_bytes() == companion + b"\n"
    assert backups.settle_restores() == []


def test_a_tool_call_waits_for_a_pending_settle(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent's write right after a rewind waits for the rewind's settle: a journal left open by
    a kill meanwhile would have its recovery write the restored bytes over the tool's."""
    monkeypatch.setenv("COMMANDCODE_TEST_SETTLE_PAUSE_MS", "300")
    project = tmp_path / "project"
    project.mkdir()
    files, _, _ = prepare(project)
    journal = home / "journals" / f"{files.session_id}.json"  # type: ignore[attr-defined]
    rewind(files, project, 1, RewindMode.CODE)
    assert journal.exists()
    outcome = run_tool("write_file", {"file_path": "pkg1/file1.txt", "content": "the agent's\n"}, project)
    assert not outcome.is_error, outcome
    assert not journal.exists(), "the tool wrote while the restore's journal was open"
    assert (project / "pkg1/file1.txt").read_text() == "the agent's\n"


def test_the_next_restore_in_this_process_waits_for_the_settle(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A redo right after a rewind takes the journal lock the rewind's settle still holds: it
    waits for that settle instead of failing (a second flock in one process would)."""
    monkeypatch.setenv("COMMANDCODE_TEST_SETTLE_PAUSE_MS", "400")  # held past the lock's 0.5 s patience
    project = tmp_path / "project"
    project.mkdir()
    files, restored_state, edited_state = prepare(project)
    journal = home / "journals" / f"{files.session_id}.json"  # type: ignore[attr-defined]
    rewind(files, project, 1, RewindMode.CODE)
    assert journal.exists(), "the rewind waited for its settle"
    assert snapshot(project) == restored_state
    redo(files, project)
    assert snapshot(project) == edited_state
    assert backups.settle_restores() == []
    assert not journal.exists()


TERMINATED_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from pathlib import Path
    from commandcode.sessions.files import SessionFiles
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.rewind import rewind
    directory, session_id, project, journal = sys.argv[1:5]

    def terminate_once_the_restore_began():
        while not os.path.exists(journal):
            time.sleep(0.0005)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=terminate_once_the_restore_began, daemon=True).start()
    rewind(SessionFiles(Path(directory), session_id), Path(project), 1, RewindMode.CODE)
    time.sleep(30)  # not reached: the held SIGTERM ends the process once the rewind is done
    """
)


def test_a_sigterm_held_through_a_rewind_is_delivered_once_its_settle_is_done(home: Path, tmp_path: Path) -> None:
    """A SIGTERM that came while the rewind committed ends the process after the rewind (its
    default action runs no exit handler), but only once the settle removed the journal."""
    project = tmp_path / "project"
    project.mkdir()
    files, restored_state, _ = prepare(project)
    journal = home / "journals" / f"{files.session_id}.json"  # type: ignore[attr-defined]
    finished = subprocess.run(
        [sys.executable, "-c", TERMINATED_SCRIPT, str(files.directory), files.session_id,  # type: ignore[attr-defined]
         str(project), str(journal)],
        env=child_environment(home, COMMANDCODE_TEST_SETTLE_PAUSE_MS="200"), capture_output=True, timeout=120,
    )
    assert finished.returncode == -signal.SIGTERM, finished.stderr
    assert not journal.exists(), "the signal was delivered before the settle was done"
    assert snapshot(project) == restored_state


def test_a_failed_settle_is_an_error_for_the_next_checkpoints_write_and_restore(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A settle whose flush failed leaves its journal open: every write of that session's
    checkpoints file is refused while it is (its recovery would undo the write), the next restore
    says so once, and the exit does not repeat what an error said."""
    journal = home / "journals" / "s.json"
    journal.parent.mkdir(parents=True)
    journal.write_text("{}")
    checkpoints = tmp_path / "s.checkpoints.jsonl"
    checkpoints.write_bytes(b"before")
    monkeypatch.setattr(backups, "native_settle", lambda wanted: [(str(journal), "Input/output error")]
                        if wanted == str(journal) else [])
    settling.started(journal, checkpoints)
    for _ in range(2):
        with pytest.raises(CheckpointError, match=r"could not be flushed to disk \(Input/output error\)"):
            write_checkpoints_data(checkpoints, b"after")
    assert checkpoints.read_bytes() == b"before"
    assert settling.settle(journal) is None, "reported once, by the write"
    backups.settle_and_warn()
    assert capsys.readouterr().err == ""
    journal.unlink()  # a recovery finished it
    write_checkpoints_data(checkpoints, b"after")
    assert checkpoints.read_bytes() == b"after"
    settling.started(journal, checkpoints)
    files = SessionFiles(tmp_path, "s")
    journal.write_text("{}")
    with pytest.raises(RestoreError, match=r"last restore of this session could not be flushed to disk"):
        backups.recover_pending(files, tmp_path)  # the next open's recovery (a rewind's first step)
    assert settling.settle(journal) is None, "said once"


@pytest.mark.parametrize(("pause_ms", "expected"), [(30, "recovered"), (3000, "error:")])
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
