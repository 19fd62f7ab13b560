"""Both programs restore code to every checkpoint the other lists, after any sequence of steps
(issue 32's "done means"): per seed, 15 random steps of our edit turns, `bash` turns, rewinds
(code or both, backwards and forwards again), redos, real-CLI resumes (its cleanup) and turns
(which rewrite the checkpoints file without our hidden lines), a Claude Code import, and a sweep
that archives every session and restores it. After every step, for every session: the real
CLI's restore check passes for every checkpoint it lists (every blob there, with its bytes), and
our dry run finds every backup for every checkpoint we list. At the end of each seed the real
CLI's `/rewind` (its TUI) restores the oldest checkpoint it lists, and so does ours."""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

import pytest

from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.rewind import RewindOptions, rewind
from commandcode.sessions.files import SessionFiles
from helpers.cli import run_cli, run_ok
from helpers.npm_programs import Programs
from helpers.real_cli import RealCli
from helpers.session_files import claude_backup_name, write_claude_checkpointed_session
from helpers.two_programs import (
    bash_call,
    our_turn,
    real_can_restore,
    real_code_rewind,
    real_listed,
    real_resume,
    real_turn,
    write_call,
)

pytestmark = [pytest.mark.npm, pytest.mark.slow, pytest.mark.terminal]

NAMES = ["a.txt", "b.txt", "sub/c.txt", "d.txt"]
STEPS = 15


def _sessions(data: Path) -> dict[str, Path]:
    return {path.stem: path for path in (data / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name}


def _ours_refuse(cwd: Path, data: Path, session: str, transcript: Path) -> list[str]:
    """Our dry run to every checkpoint we list: the backups it cannot find (outside edits do not
    count: a `--force` restores over them)."""
    listed = json.loads(run_ok(["checkpoints", "list", session, "--all", "--json"], cwd, data).stdout)["checkpoints"]
    files = SessionFiles.for_transcript(transcript)
    refused = []
    for record in listed:
        if record["files"]:
            result = rewind(files, cwd, record["number"], RewindMode.CODE, RewindOptions(dry_run=True, allow_outside=True))
            refused.extend(f"checkpoint {record['number']}: {problem.message}" for problem in result.problems
                           if problem.code != "changed_outside")
    return refused


class Run:
    def __init__(self, real: RealCli, cwd: Path, data: Path, tmp_path: Path, rng: random.Random) -> None:
        self.real, self.cwd, self.data, self.tmp_path, self.rng = real, cwd, data, tmp_path, rng
        self.turns = 0
        self.imported = False
        our_turn(cwd, data, "turn 0", write_call("a.txt", "zero\n"))
        [self.session] = _sessions(data)
        self.log: list[str] = []

    def content(self) -> str:
        return f"v{self.rng.randrange(1000)}\n"

    def our_edit(self) -> None:
        self.turns += 1
        names = self.rng.sample(NAMES, 2)
        our_turn(self.cwd, self.data, f"turn {self.turns}", *(write_call(name, self.content()) for name in names),
                 session=self.session)

    def our_bash(self) -> None:
        self.turns += 1
        name, other = self.rng.sample(["a.txt", "b.txt", "d.txt"], 2)
        command = self.rng.choice([f"rm -f {name} && echo {self.content().strip()} > {other}",
                                   f"mkdir -p sub && echo {self.content().strip()} >> sub/c.txt && rm -f {name}",
                                   f"touch {name} && mv {name} e{self.turns}.txt"])
        our_turn(self.cwd, self.data, f"turn {self.turns}", bash_call(command), session=self.session)

    def our_rewind(self) -> None:
        listed = json.loads(run_ok(["checkpoints", "list", self.session, "--all", "--json"], self.cwd,
                                   self.data).stdout)["checkpoints"]
        record = self.rng.choice(listed)
        modes = [mode for mode in ("code", "both") if mode in record["modes"]]
        if not modes:
            return
        mode = self.rng.choice(modes)
        self.log[-1] += f" to {record['number']} {mode}"
        done = run_cli(["rewind", self.session, "--to", str(record["number"]), "--mode", mode, "--yes", "--force"],
                       self.cwd, self.data)
        assert done.returncode == 0, done.stderr

    def our_redo(self) -> None:
        done = run_cli(["rewind", self.session, "--redo", "--yes", "--force"], self.cwd, self.data)
        assert done.returncode == 0 or "redo" in done.stderr, done.stderr  # nothing to redo: refused, as said
        self.log[-1] += f" rc={done.returncode}"

    def real_turn(self) -> None:
        self.turns += 1
        name = self.rng.choice(NAMES)
        real_turn(self.real, self.session, f"turn {self.turns} real", (self.cwd / name, self.content()))

    def real_resume(self) -> None:
        real_resume(self.real, self.cwd, self.session, self.tmp_path)

    def claude_import(self) -> None:
        if self.imported:
            return self.our_edit()
        self.imported = True
        claude, sid = self.tmp_path / "claude", str(uuid.uuid4())
        name = claude_backup_name(self.cwd / "imported.txt")
        (claude / "file-history" / sid).mkdir(parents=True)
        (claude / "file-history" / sid / name).write_bytes(b"before the import\n")
        transcript = write_claude_checkpointed_session(claude, self.cwd, sid, {"imported.txt": name})
        done = run_cli(["import", "claude", str(transcript), "--json"], self.cwd, self.data,
                       CLAUDE_CONFIG_DIR=str(claude))
        assert done.returncode == 0, done.stderr
        return None

    def sweep(self) -> None:
        done = json.loads(run_ok(["sweep", "--archive", "--older-than", "0h", "--include-named", "--json"], self.cwd,
                                 self.data).stdout)
        for row in done["sessions"]:
            run_ok(["sweep", "--restore", row["id"]], self.cwd, self.data)

    def check(self) -> None:
        for session, transcript in _sessions(self.data).items():
            assert real_can_restore(self.data, session) == [], self.log
            assert _ours_refuse(self.cwd, self.data, session, transcript) == [], self.log


@pytest.mark.parametrize("seed", [3201, 3202, 3203])
def test_both_programs_restore_every_checkpoint_the_other_lists(npm_programs: Programs, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    cwd = tmp_path / "proj"
    cwd.mkdir()
    real = RealCli(npm_programs, tmp_path / "home", cwd)
    monkeypatch.setenv("COMMANDCODE_HOME", str(real.data))  # our in-process dry runs
    rng = random.Random(seed)
    run = Run(real, cwd, real.data, tmp_path, rng)
    steps = {"our_edit": 3, "our_bash": 2, "our_rewind": 3, "our_redo": 2, "real_turn": 2, "real_resume": 1,
             "claude_import": 0.5, "sweep": 0.7}
    for _ in range(STEPS):
        [step] = rng.choices(list(steps), weights=list(steps.values()))
        run.log.append(step)
        getattr(run, step)()
        run.check()
    # the real CLI's own /rewind to the oldest checkpoint it lists with backups, then ours
    listed = [record for record in real_listed(real.data, run.session) if record.get("files")]
    if listed:
        prompt = str(listed[0]["prompt"])
        [screen] = real_code_rewind(real, cwd, run.session, tmp_path, prompt)
        assert "Restore verification failed" not in screen and "Restored to checkpoint" in screen, (run.log, screen)
    ours = json.loads(run_ok(["checkpoints", "list", run.session, "--all", "--json"], cwd, real.data).stdout)
    first = next((record for record in ours["checkpoints"] if record["files"]), None)
    if first is not None:
        done = run_cli(["rewind", run.session, "--to", str(first["number"]), "--mode", "code", "--yes", "--force"],
                       cwd, real.data)
        assert done.returncode == 0, (run.log, done.stderr)
    run.check()
