"""Crash lanes for two writing paths of issue 26 §4, through real `commandcode` processes killed
with SIGKILL at random moments (the native restore paced by `COMMANDCODE_TEST_STEP_DELAY_MS`, so
kills land between its steps):

- a code rewind that puts back symlinks, FIFOs, sockets and empty folders a `bash` command created,
  removed or put in a file's place: whatever the kill interrupted, the next command finishes it,
  a rerun of the rewind leaves exactly the tree the checkpoint saw, and redo brings the
  command's tree back (nothing lost);
- a forced redo over an outside edit: after the kill, the redo (rerun when it had not committed)
  leaves the redone state, and the next redo still brings the hand edit back.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.checkpoints import lstat_tree as tree
from helpers.cli import cli_env, only_transcript, run_cli, run_ok

ATTEMPTS = 6
COMMAND = ("ln -s a.txt made_link && ln -s ../outside/secret out_link && mkfifo made_fifo && mkdir -p hollow/er "
           "&& rm old_link && rmdir old_folder && rm f.txt && ln -s a.txt f.txt && rm s && echo new > s "
           "&& rmdir d && echo x > d && echo changed > a.txt && rm old_sock "
           "&& python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('made_sock')\"")


def _prepare(workdir: Path) -> None:
    (workdir / "a.txt").write_text("a\n")
    (workdir / "f.txt").write_text("f\n")
    os.symlink("a.txt", workdir / "old_link")
    os.symlink("a.txt", workdir / "s")
    (workdir / "old_folder").mkdir()
    (workdir / "d").mkdir()
    with socket.socket(socket.AF_UNIX) as server:  # a socket's name the command removes
        server.bind(str(workdir / "old_sock"))
    outside = workdir.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret").write_text("secret\n")


def _killed(args: list[str], workdir: Path, home: Path, rng: random.Random) -> bool:
    """Runs `commandcode ARGS` with each restore step slowed, and SIGKILLs it at a random moment.
    Returns whether the kill landed inside the restore (its journal is left)."""
    process = subprocess.Popen([sys.executable, "-m", "commandcode", *args], cwd=workdir,
                               env=cli_env(home, COMMANDCODE_TEST_STEP_DELAY_MS=str(rng.choice([5, 20, 40]))),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    if rng.random() < 0.75:  # into the restore: once its journal is there, 0-300 ms on
        deadline = time.monotonic() + 60
        while not any((home / "journals").glob("*.json")) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.3))
    else:  # anywhere: before the restore, or after it
        time.sleep(rng.uniform(0.1, 2.0))
    process.send_signal(signal.SIGKILL)
    process.wait()
    return any((home / "journals").glob("*.json"))


def _redo_until(workdir: Path, home: Path, session: str, wanted: dict[str, tuple[object, ...]]) -> None:
    for _ in range(2):  # a rerun that found nothing left to do adds an empty redo point first
        run_ok(["rewind", session, "--redo", "--yes"], workdir, home)
        if tree(workdir) == wanted:
            return
    assert tree(workdir) == wanted, "the command's tree is no longer reachable by redo"


@pytest.mark.slow
def test_a_killed_rewind_of_links_fifos_and_folders_is_completed_and_loses_nothing(home: Path, tmp_path: Path) -> None:
    rng = random.Random(2026_12_05)
    inside = 0
    for attempt in range(ATTEMPTS):
        workdir = (tmp_path / f"w{attempt}" / "proj").resolve()
        workdir.mkdir(parents=True)
        _prepare(workdir)
        before = tree(workdir)
        run_ok(["-p", "call bash " + json.dumps({"command": COMMAND}), "--yolo"], workdir, home)
        after = tree(workdir)
        session = only_transcript(home, workdir).name[: -len(".jsonl")]
        inside += _killed(["rewind", session, "--to", "1", "--mode", "code", "--yes"], workdir, home, rng)
        rerun = run_cli(["rewind", session, "--to", "1", "--mode", "code", "--yes"], workdir, home)
        assert rerun.returncode == 0, f"attempt {attempt}: {rerun.stderr}"
        assert tree(workdir) == before, f"attempt {attempt}: the rerun left another tree"
        assert not list((home / "journals").glob("*.json")), "a journal was left behind"
        _redo_until(workdir, home, session, after)
        doctor = run_cli(["doctor", "--gc", "--dry-run"], workdir, home)
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert inside >= 2, f"only {inside} kills landed inside a restore"


@pytest.mark.slow
def test_a_killed_forced_redo_keeps_the_outside_edit_reachable(home: Path, tmp_path: Path) -> None:
    rng = random.Random(2026_12_06)
    files = 40
    inside = 0
    for attempt in range(ATTEMPTS):
        workdir = (tmp_path / f"r{attempt}" / "proj").resolve()
        workdir.mkdir(parents=True)
        for index in range(files):
            (workdir / f"f{index}.txt").write_text(f"one {index}\n")
        write_all = " && ".join(f"echo two {index} > f{index}.txt" for index in range(files))
        run_ok(["-p", "call bash " + json.dumps({"command": write_all}), "--yolo"], workdir, home)
        session = only_transcript(home, workdir).name[: -len(".jsonl")]
        redone = tree(workdir)
        run_ok(["rewind", session, "--to", "1", "--mode", "code", "--yes"], workdir, home)
        (workdir / "f0.txt").write_text("by hand\n")
        by_hand = tree(workdir)
        inside += _killed(["rewind", session, "--redo", "--force", "--yes"], workdir, home, rng)
        listed = run_cli(["checkpoints", "list", session], workdir, home)  # recovers an interrupted restore
        assert listed.returncode == 0, listed.stderr
        state = tree(workdir)
        assert state in (by_hand, redone), f"attempt {attempt}: half a redo"
        if state == by_hand:  # killed before it committed: the rerun does it
            run_ok(["rewind", session, "--redo", "--force", "--yes"], workdir, home)
        assert tree(workdir) == redone
        run_ok(["rewind", session, "--redo", "--yes"], workdir, home)
        assert tree(workdir) == by_hand, f"attempt {attempt}: the hand edit was lost"
    assert inside >= 2, f"only {inside} kills landed inside a restore"
