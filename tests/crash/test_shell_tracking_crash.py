"""Crash lane for shell tracking of a huge command (issue 26 §4: "a kill during that commits
nothing"): a real `-p` turn whose `bash` call creates thousands of files and changes some of the
project's is SIGKILLed at random moments around its tracking pass (once the command's files are
all there, 0-400 ms on, or anywhere in the turn). After every kill:

- the store and the checkpoints are consistent (every object verifies, every object a record or
  the baseline sidecar names is there: `helpers.crash_checks`, `helpers.crash_shell_baseline`),
  and `doctor --gc --dry-run` succeeds;
- the next run of the session works, and a code rewind of that next turn gives back exactly the
  tree the kill left (its baseline, read back from the killed process's sidecar or taken
  again, is right).
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import crash_checks, crash_shell_baseline
from helpers.checkpoints import lstat_tree as tree
from helpers.cli import cli_env, run_cli, run_ok, transcripts

ATTEMPTS = 5
CREATED = 3000


@dataclass
class _Workspace:
    """What the harness checks need of a workspace."""

    data: Path
    project: Path
    verified_objects: set[tuple[str, int, int]] = field(default_factory=set)


def _bash(command: str) -> str:
    return "call bash " + json.dumps({"command": command})


def _killed_turn(workdir: Path, home: Path, rng: random.Random) -> None:
    command = (f"mkdir -p gen && i=0; while [ $i -lt {CREATED} ]; do echo \"file $i\" > gen/f$i.txt; i=$((i+1)); done"
               " && for f in src/m1.py src/m2.py src/m3.py; do echo changed >> $f; done && rm src/m4.py"
               " && ln -s m1.py src/link && touch gen/done")
    process = subprocess.Popen([sys.executable, "-m", "commandcode", "-p", _bash(command), "--yolo"], cwd=workdir,
                               env=cli_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL)
    if rng.random() < 0.7:  # into the tracking pass: the command is done, its files are being recorded
        deadline = time.monotonic() + 120
        while not (workdir / "gen" / "done").exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        delay = rng.uniform(0, 0.4)
    else:
        delay = rng.uniform(0.2, 4.0)
    with contextlib.suppress(subprocess.TimeoutExpired):  # a turn that ends sooner leaves nothing to kill
        process.wait(timeout=delay)
    process.send_signal(signal.SIGKILL)
    process.wait()
    _settle(workdir)


def _settle(workdir: Path) -> None:
    """Waits for the command to end: it outlives the killed agent (its own process group)."""
    def state() -> tuple[int, bool]:
        gen = workdir / "gen"
        return (len(list(gen.iterdir())) if gen.is_dir() else 0), (workdir / "src" / "link").is_symlink()

    deadline = time.monotonic() + 120
    seen = state()
    while not (workdir / "gen" / "done").exists() and time.monotonic() < deadline:
        time.sleep(0.5)
        now = state()
        if now == seen:
            return
        seen = now


@pytest.mark.slow
def test_a_kill_during_the_tracking_of_a_huge_command_leaves_everything_consistent(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(2026_12_07)
    for attempt in range(ATTEMPTS):
        home = home.parent / f"data{attempt}"  # a data dir of its own: the checks look at all of it
        monkeypatch.setenv("COMMANDCODE_HOME", str(home))
        workdir = (tmp_path / f"t{attempt}" / "proj").resolve()
        (workdir / "src").mkdir(parents=True)
        for index in range(50):
            (workdir / "src" / f"m{index}.py").write_text(f"value = {index}\n")
        _killed_turn(workdir, home, rng)
        violations: list[str] = []
        workspace = _Workspace(home, workdir)
        crash_checks.check_checkpoints_and_objects(workspace, violations, f"attempt {attempt}")  # type: ignore[arg-type]
        crash_shell_baseline.check(workspace, violations, f"attempt {attempt}")
        assert not violations, violations
        left = tree(workdir)
        found = transcripts(home, workdir)
        resume = ["-r", found[0].name[: -len(".jsonl")]] if found else []
        run_ok(["-p", _bash("echo again >> src/m1.py && rm -f gen/f7.txt && mkdir hollow && ln -s x dangling"),
                *resume, "--yolo"], workdir, home)
        (session,) = [path.name[: -len(".jsonl")] for path in transcripts(home, workdir)]
        listed = json.loads(run_ok(["checkpoints", "list", session, "--json"], workdir, home).stdout)
        rows = listed["checkpoints"] if isinstance(listed, dict) else listed
        newest = max(int(row["number"]) for row in rows)
        run_ok(["rewind", session, "--to", str(newest), "--mode", "code", "--yes"], workdir, home)
        assert tree(workdir) == left, f"attempt {attempt}: the rewind of the next turn is wrong"
        doctor = run_cli(["doctor", "--gc", "--dry-run"], workdir, home)
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
