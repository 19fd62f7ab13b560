"""A `bash` command killed -9 together with its agent is undone by a rewind (issue 28): a real
`-p` turn (the offline model) runs a command that changes, deletes and creates files, then
sleeps; the agent's process group is SIGKILLed mid-command. Resuming the session records what
the command did into the killed turn's checkpoint (from the note written before it ran), and a
code rewind of that turn puts the tree back byte for byte: modes, the symlink and the folders
too. On 55fdfa8 the command's changes were recorded only at its end, so the rewind left them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from commandcode.sessions.files import SessionFiles
from helpers.checkpoints import lstat_tree, write
from helpers.cli import cli_env, only_transcript, run_ok, wait_for


def _seed(workdir: Path) -> None:
    write(workdir / "a.txt", "alpha\n")
    write(workdir / "run.sh", "#!/bin/sh\necho run\n", 0o755)
    write(workdir / "gone.txt", "deleted by the command\n")
    write(workdir / "pkg/module.py", "VALUE = 1\n", 0o640)


def _killed_mid_command(workdir: Path, home: Path, marker: Path) -> None:
    command = ("echo changed > a.txt; printf more >> pkg/module.py; chmod 600 run.sh; rm gone.txt; "
               "mkdir -p made/deep; echo y > made/deep/y.txt; ln -s a.txt link; mkdir -p hollow/inner; "
               f"touch {marker}; sleep 60")
    prompt = "the killed turn\ncall bash " + json.dumps({"command": command})
    process = subprocess.Popen([sys.executable, "-m", "commandcode", "--yolo", "-c", "-p", prompt], cwd=workdir,
                               env=cli_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(lambda: marker.exists() or process.poll() is not None, what="the command's sleep", timeout=60)
        assert process.poll() is None, process.communicate()
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    assert (workdir / "a.txt").read_text() == "changed\n" and (workdir / "made/deep/y.txt").exists()


def _killed_session(home: Path, workdir: Path, marker: Path) -> tuple[dict[str, tuple[object, ...]], SessionFiles]:
    """A first turn, then the killed one: the tree before the killed turn, and the session."""
    _seed(workdir)
    run_ok(["-p", "first turn"], workdir, home)
    before = lstat_tree(workdir)
    _killed_mid_command(workdir, home, marker)
    return before, SessionFiles.for_transcript(only_transcript(home, workdir))


def _rewind_to_before_the_killed_turn(home: Path, workdir: Path, files: SessionFiles) -> None:
    rewound = run_ok(["rewind", files.session_id, "--to", "2", "--mode", "code", "--yes"], workdir, home)
    assert "Traceback" not in rewound.stderr


def test_a_command_killed_with_its_agent_is_undone_after_a_resume(home: Path, workdir: Path, tmp_path: Path) -> None:
    before, files = _killed_session(home, workdir, tmp_path / "sleeping")
    note = files.directory / (files.session_id + ".shell-pending.json")
    assert note.exists()
    run_ok(["-c", "-p", "after the kill"], workdir, home)  # the resumed session records the killed command
    assert not note.exists()
    _rewind_to_before_the_killed_turn(home, workdir, files)
    assert lstat_tree(workdir) == before


def test_a_rewind_straight_after_the_kill_undoes_the_command(home: Path, workdir: Path, tmp_path: Path) -> None:
    before, files = _killed_session(home, workdir, tmp_path / "sleeping")
    _rewind_to_before_the_killed_turn(home, workdir, files)
    assert lstat_tree(workdir) == before
