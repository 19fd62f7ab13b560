"""The scratchpad's life with its session, through the real programs: a fork made at launch
(`--fork-session`, in the interactive shell) starts with a copy of its source's scratchpad (the
source's stays), deleting a session (the picker's delete) deletes its scratchpad, and
`commandcode sweep` removes the scratchpads untouched for 30 days."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from commandcode.agent.manage import delete_session
from commandcode.sessions.files import SessionFiles
from commandcode.workspace.scratchpad import sanitize_cwd
from helpers.cli import SCRATCHPAD_BASE, run_cli, run_ok, transcripts
from helpers.terminal import shell_session

WRITE = 'call write_file {"file_path": "$COMMANDCODE_SCRATCHPAD/plan.md", "content": "step one\\n"}'


def _pad(cwd: Path, session_id: str) -> Path:
    return Path(SCRATCHPAD_BASE) / f"commandcode-{os.getuid()}" / sanitize_cwd(str(cwd)) / session_id / "scratchpad"


def _session_with_a_scratch_file(home: Path, workdir: Path) -> str:
    completed = run_ok(["-p", WRITE, "--output-format", "json"], workdir, home)
    session_id: str = json.loads(completed.stdout)["session_id"]
    assert (_pad(workdir, session_id) / "plan.md").read_text() == "step one\n"
    return session_id


@pytest.mark.terminal
def test_a_fork_at_launch_starts_with_a_copy_of_the_scratchpad(home: Path, workdir: Path) -> None:
    source = _session_with_a_scratch_file(home, workdir)
    shell = shell_session(workdir, home, ["-r", source, "--fork-session"])
    try:
        screen = shell.exchange('call read_file {"file_path": "$COMMANDCODE_SCRATCHPAD/plan.md"}', "Ran 1 tool call(s)")
        assert "Read 1/1 file" in screen and "Allow" not in screen  # no permission question in the scratchpad
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    fork = next(path.stem for path in transcripts(home, workdir) if path.stem != source)
    assert (_pad(workdir, fork) / "plan.md").read_text() == "step one\n"
    assert (_pad(workdir, source) / "plan.md").read_text() == "step one\n"  # the source keeps its own


def test_a_plain_resume_copies_nothing_and_disabled_scratchpads_are_not_copied(home: Path, workdir: Path) -> None:
    from commandcode.agent.runtime import AgentSession

    source = _session_with_a_scratch_file(home, workdir)
    (workdir / ".commandcode").mkdir()
    (workdir / ".commandcode" / "settings.json").write_text('{"disableScratchpad": true}')
    with AgentSession.start(workdir, reference=source, fork=True) as fork:
        assert fork.session_id != source
        assert not _pad(workdir, fork.session_id).exists()


def test_deleting_a_session_deletes_its_scratchpad(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no `trash` program: the picker's delete removes
    session = _session_with_a_scratch_file(home, workdir)
    other = _session_with_a_scratch_file(home, workdir)
    transcript = next(path for path in transcripts(home, workdir) if path.stem == session)
    monkeypatch.setenv("COMMANDCODE_SCRATCHPAD_BASE", SCRATCHPAD_BASE)
    removed, trashed = delete_session(SessionFiles.for_transcript(transcript))
    assert not trashed and str(_pad(workdir, session).parent) in removed
    assert not _pad(workdir, session).parent.exists() and not transcript.exists()
    assert (_pad(workdir, other) / "plan.md").exists()  # another session's is untouched


def test_sweep_removes_scratchpads_untouched_for_30_days(home: Path, workdir: Path) -> None:
    old = _session_with_a_scratch_file(home, workdir)
    recent = _session_with_a_scratch_file(home, workdir)
    folder = _pad(workdir, old).parent
    long_ago = time.time() - 31 * 86400
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (long_ago, long_ago), follow_symlinks=False)
    dry = json.loads(run_ok(["sweep", "--dry-run", "--json"], workdir, home).stdout)
    assert dry["stale_scratchpads"] == 1 and folder.exists()
    completed = run_cli(["sweep", "--json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["stale_scratchpads"] == 1
    assert not folder.exists() and (_pad(workdir, recent) / "plan.md").exists()
    assert any(path.stem == old for path in transcripts(home, workdir)), "its transcript is recent: it stays"
