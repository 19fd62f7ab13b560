"""A code rewind undoes what sub-agents did (issue #28), end to end with the offline model:
parallel runs (four `agent` calls of one step) and a background run edit, create and delete files
with the edit tools and `bash`, two of them the same file; `commandcode rewind --mode code` then
puts the tree back byte for byte (modes too). A `-p` process killed -9 while its runs work: the
runs' backups still restore the tree, and neither the parent's transcript nor any run's holds a
half-written step. Through the shell in a pty: `/rewind` → "Restore code only" after parallel
runs, with a background run still going (stopped first, one line says so)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from commandcode.sessions.files import SessionFiles
from commandcode.sessions.subagent_runs import list_subagent_runs
from helpers.checkpoints import snapshot, write
from helpers.cli import cli_env, only_transcript, run_ok, wait_for
from helpers.subagent_prompts import agent_call, call, dangling_calls, run_metas
from helpers.terminal import shell_session

DOWN = "\x1b[B"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"  # bracketed paste: newlines stay in the message


def _seed(workdir: Path) -> None:
    write(workdir / "a.txt", "alpha\n")
    write(workdir / "b.txt", "bravo\n")
    write(workdir / "shared.txt", "line1\nline2\nline3\n")
    write(workdir / "run.sh", "#!/bin/sh\necho run\n", 0o755)
    write(workdir / "gone.txt", "deleted by a command\n")
    write(workdir / "data.bin", bytes(range(256)) * 64)
    write(workdir / "pkg/module.py", "VALUE = 1\n", 0o640)


def _parallel_prompt(tag: str) -> str:
    """One step of four parallel runs, then a background run and the wait for it."""
    return "\n".join([
        agent_call(call("edit_file", file_path="a.txt", old_string="alpha", new_string=f"alpha {tag}"),
                   call("write_file", file_path="new/deep/x.txt", content="made by A\n"),
                   call("edit_file", file_path="shared.txt", old_string="line1", new_string="A1"), description="A"),
        agent_call(call("write_file", file_path="b.txt", content="rewritten by B\n"),
                   call("edit_file", file_path="shared.txt", old_string="line2", new_string="B2"),
                   call("bash", command="chmod 600 run.sh; printf more >> data.bin"), description="B", also=True),
        agent_call(call("bash", command="rm gone.txt; mkdir -p made/dir; echo y > made/dir/y.txt"),
                   call("edit_file", file_path="shared.txt", old_string="line3", new_string="C3"), description="C",
                   also=True),
        agent_call(*(call("write_file", file_path=f"many/f{index}.txt", content=f"file {index}\n") for index in range(8)),
                   call("edit_file", file_path="pkg/module.py", old_string="1", new_string="2"), description="D",
                   also=True),
        agent_call(call("write_file", file_path="bg.txt", content="background\n"),
                   call("edit_file", file_path="b.txt", old_string="B", new_string="the background run"),
                   description="E", run_in_background=True),
        call("agent_output", agent_id="{{agent_id}}"),
    ])


def test_a_code_rewind_after_parallel_runs_restores_every_file(home: Path, workdir: Path) -> None:
    _seed(workdir)
    run_ok(["-p", "first turn"], workdir, home)
    before = snapshot(workdir)
    run_ok(["--yolo", "-c", "-p", _parallel_prompt("turn 2")], workdir, home)
    files = SessionFiles.for_transcript(only_transcript(home, workdir))
    assert {meta["status"] for meta in run_metas(files).values()} == {"completed"}
    changed = snapshot(workdir)
    assert changed["shared.txt"][1] == b"A1\nB2\nC3\n" and not (workdir / "gone.txt").exists()
    assert changed["b.txt"][1] == b"rewritten by the background run\n" and changed["run.sh"][2] == 0o600
    rewound = run_ok(["rewind", files.session_id, "--to", "2", "--mode", "code", "--yes"], workdir, home)
    assert "Traceback" not in rewound.stderr
    assert snapshot(workdir) == before
    assert not (workdir / "new").exists() and not (workdir / "made").exists() and not (workdir / "many").exists()


def test_runs_killed_with_their_parent_still_restore_and_leave_whole_transcripts(home: Path, workdir: Path,
                                                                                   tmp_path: Path) -> None:
    _seed(workdir)
    run_ok(["-p", "first turn"], workdir, home)
    before = snapshot(workdir)
    markers = [tmp_path / f"ready{number}" for number in range(3)]
    prompt = "\n".join([  # the background run first: its launch returns at once, then the step's two run in parallel
        agent_call(call("write_file", file_path="b.txt", content="background\n"),
                   call("bash", command=f"touch {markers[2]}; sleep 60"), description="C", run_in_background=True),
        agent_call(*(call("write_file", file_path=f"out/a{index}.txt", content=f"a {index}\n") for index in range(5)),
                   call("edit_file", file_path="shared.txt", old_string="line1", new_string="A1"),
                   call("bash", command=f"touch {markers[0]}; sleep 60"), description="A", also=True),
        agent_call(call("edit_file", file_path="shared.txt", old_string="line2", new_string="B2"),
                   call("bash", command="echo changed > a.txt; rm gone.txt"),  # a command that ended: recorded
                   call("bash", command=f"touch {markers[1]}; sleep 60"),
                   description="B", also=True),
    ])
    process = subprocess.Popen([sys.executable, "-m", "commandcode", "--yolo", "-c", "-p", prompt], cwd=workdir,
                               env=cli_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(lambda: all(marker.exists() for marker in markers) or process.poll() is not None,
                 what="the three runs at their last command", timeout=60)
        assert process.poll() is None, process.communicate()
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    assert (workdir / "shared.txt").read_text() == "A1\nB2\nline3\n"
    files = SessionFiles.for_transcript(only_transcript(home, workdir))
    assert dangling_calls(files.transcript) == []
    runs = list_subagent_runs(files)
    assert runs.warnings == [] and len(runs.runs) == 3
    for run in runs.runs:
        assert dangling_calls(run.path) == [], run.agent_id
        assert run.status == "interrupted", run
    # --force: shared.txt's second edit's after-digest died with the process (it is written with
    # the next durable write, not on its own), so the first edit's digest on disk calls it "changed
    # outside"; the backups are what this checks
    run_ok(["rewind", files.session_id, "--to", "2", "--mode", "code", "--yes", "--force"], workdir, home)
    assert snapshot(workdir) == before


@pytest.mark.terminal
def test_rewind_in_the_shell_after_parallel_runs_stops_a_running_one_and_restores_everything(
        home: Path, workdir: Path, tmp_path: Path) -> None:
    _seed(workdir)
    before = snapshot(workdir)
    started = tmp_path / "started"
    shell = shell_session(workdir, home, ["--yolo"], columns=220)
    try:
        shell.send(PASTE_START + _prompt_lines(started) + PASTE_END)  # one message of three lines
        shell.send("\r")
        shell.wait_screen("Background agent launched")
        shell.wait_prompt()
        wait_for(started.exists, what="the background run's command")
        assert (workdir / "shared.txt").read_text() == "A1\nB2\nline3\n"
        shell.line("/rewind")
        shell.wait_screen("Enter: choose what to restore")
        shell.send("\r")  # the newest checkpoint: the turn of the runs
        shell.wait_screen("Restore code only")
        shell.send(DOWN + DOWN + "\r")  # code and conversation, conversation only, code only
        shell.wait_screen("Yes, restore")
        shell.send("\r")
        screen = shell.wait_screen("Rewound to checkpoint 1")
        assert "Traceback" not in screen
        shell.wait_prompt()
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    text = " ".join(shell.text().split())
    assert re.search(r"stopped 1 running sub-agent \(bg-\d+-[0-9a-f]{8}\) before rewinding", text), text[-2000:]
    assert snapshot(workdir) == before


def _prompt_lines(started: Path) -> str:
    """The shell's prompt for the pty test: two runs in one step (`also call`), then a background one."""
    return "\n".join([
        agent_call(call("edit_file", file_path="a.txt", old_string="alpha", new_string="ALPHA"),
                   call("edit_file", file_path="shared.txt", old_string="line1", new_string="A1"), description="A"),
        agent_call(call("edit_file", file_path="shared.txt", old_string="line2", new_string="B2"),
                   call("bash", command="rm gone.txt; printf more >> data.bin"), description="B", also=True),
        agent_call(call("write_file", file_path="late/bg.txt", content="background\n"),
                   call("bash", command=f"touch {started}; sleep 60"), description="Long", run_in_background=True),
    ])
