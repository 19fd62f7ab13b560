"""Crash injection for the catalog's writing operations: `sessions relink` killed at every one of
its file-system calls (through `tests/support/killable_cli.py`), and a cold catalog build killed
at random moments. After each kill: the session is whole in its old folder, its new one, or both
(the same bytes), nothing else changed, and running the command again finishes the job; a killed
catalog build leaves a listing equal to the folder scan's."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from commandcode.config.paths import project_dir
from helpers.cli import cli_env, run_cli
from helpers.locations import KILLABLE
from helpers.session_files import sid, write_session

SUFFIXES = (".jsonl", ".meta.json", ".checkpoints.jsonl")


def _killable(args: list[str], cwd: Path, home: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(KILLABLE), *args], cwd=cwd, env=cli_env(home, **extra),
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def _files(folder: Path, session_id: str) -> dict[str, bytes]:
    return {suffix: (folder / f"{session_id}{suffix}").read_bytes() for suffix in SUFFIXES
            if (folder / f"{session_id}{suffix}").exists()}


def test_relink_killed_at_every_call_loses_nothing(home: Path, workdir: Path, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    transcript = write_session(gone, sid(1), ["before the move"], meta={"title": "movable"})
    transcript.with_name(f"{sid(1)}.checkpoints.jsonl").write_text('{"id": "c1"}\n')
    old_folder, new_folder = project_dir(gone), project_dir(workdir)
    gone.rmdir()
    original = _files(old_folder, sid(1))
    count_file = tmp_path / "count"
    dry = tmp_path / "dry"
    # Count the calls of one whole relink, on a copy.
    dry_home = dry / "home"
    (dry_home / "projects").mkdir(parents=True)
    subprocess.run(["cp", "-a", str(old_folder), str(dry_home / "projects")], check=True)
    counted = _killable(["sessions", "relink", sid(1)], workdir, dry_home, COMMANDCODE_TEST_COUNT_FILE=str(count_file))
    assert counted.returncode == 0, counted.stderr
    calls = int(count_file.read_text())
    assert calls >= 6
    for point in range(1, calls + 1):
        killed = _killable(["sessions", "relink", sid(1)], workdir, home, COMMANDCODE_TEST_KILL_AT=str(point))
        assert killed.returncode == -9, (point, killed.stderr)
        old, new = _files(old_folder, sid(1)), _files(new_folder, sid(1))
        assert ".jsonl" in old or ".jsonl" in new, point
        whole = new if ".jsonl" in new and len(new) == len(original) else old
        assert whole == original, point  # one place holds the whole session, byte for byte
        for place in (old, new):
            assert all(data == original[suffix] for suffix, data in place.items()), point
        finished = run_cli(["sessions", "relink", sid(1)], workdir, home)
        assert finished.returncode == 0, (point, finished.stderr)
        assert _files(new_folder, sid(1)) == original and _files(old_folder, sid(1)) == {}, point
        for suffix in SUFFIXES:  # back to the old place for the next point
            os.replace(new_folder / f"{sid(1)}{suffix}", old_folder / f"{sid(1)}{suffix}")


def test_a_killed_cold_build_leaves_a_listing_equal_to_the_folder_scan(home: Path, workdir: Path) -> None:
    for number in range(120):
        write_session(workdir, sid(number), [f"prompt {number} " + "x" * 2000, "more"],
                      when=f"2026-01-01T00:{number // 60:02d}:{number % 60:02d}.000Z")
    expected = run_cli(["sessions", "list", "--all", "--json"], workdir, home, COMMANDCODE_CATALOG="off")
    rng = random.Random(15)
    for _ in range(6):
        process = subprocess.Popen([sys.executable, "-m", "commandcode", "doctor", "--reindex"], cwd=workdir,
                                   env=cli_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            process.wait(timeout=rng.uniform(0.2, 1.5))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        listed = run_cli(["sessions", "list", "--all", "--json"], workdir, home)
        assert listed.returncode == 0 and listed.stderr == "", listed.stderr
        assert json.loads(listed.stdout) == json.loads(expected.stdout)
