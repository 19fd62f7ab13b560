"""A signal to the process group while `rewind --mode both` commits waits for the commit: code,
conversation and checkpoints land together, wholly before or wholly after (issue 11, class 3).

A real `commandcode rewind` subprocess (restore steps slowed by the `COMMANDCODE_TEST_STEP_DELAY_MS`
hook) gets SIGINT or SIGTERM at many moments: before it starts restoring, the moment the first
file changed, and at fixed offsets through the restore. The next command (`checkpoints list`)
runs, then the three parts must agree.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

FILES = 30


class Session:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.work = root / "work"
        self.data = root / "data"
        self.work.mkdir()
        self.env = {**os.environ, "COMMANDCODE_HOME": str(self.data), "COMMANDCODE_INDEX": "off", "NO_COLOR": "1"}
        for flag, version in (("-p", "v1"), ("-c", "v2")):
            calls = "\n".join(f'call write_file {{"file_path":"f{n:02d}.txt","content":"{version} {n}"}}' for n in range(FILES))
            args = [flag, "-p", calls] if flag == "-c" else ["-p", calls]
            done = self.run(*args)
            assert done.returncode == 0, done.stderr
        (transcript,) = [p for p in (self.data / "projects").glob("*/*.jsonl") if ".checkpoints." not in p.name]
        self.id = transcript.name[: -len(".jsonl")]
        self.transcript = transcript
        self.checkpoints = transcript.with_name(f"{self.id}.checkpoints.jsonl")
        self.saved = root / "saved"
        shutil.copytree(self.data, self.saved / "data", symlinks=True)
        shutil.copytree(self.work, self.saved / "work", symlinks=True)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=self.work, env=self.env,
                              capture_output=True, text=True, timeout=300, check=False)

    def reset(self) -> None:
        for name in ("data", "work"):
            shutil.rmtree(self.root / name)
            shutil.copytree(self.saved / name, self.root / name, symlinks=True)

    def files_state(self) -> str:
        contents = {(self.work / f"f{n:02d}.txt").read_text() for n in range(FILES)}
        if contents == {f"v2 {n}" for n in range(FILES)}:
            return "before"
        if contents == {f"v1 {n}" for n in range(FILES)}:
            return "after"
        return f"mixed {sorted(contents)[:4]}"

    def conversation_state(self) -> str:
        moved = any((json.loads(line).get("data") or {}).get("reason") == "rewind"
                    for line in self.transcript.read_text().splitlines() if line.strip())
        return "after" if moved else "before"

    def checkpoints_state(self) -> str:
        # the records the real CLI reads (a rewind keeps the rest as hidden `#` lines, format §6.1)
        count = sum(1 for line in self.checkpoints.read_text().splitlines() if line.strip() and not line.startswith("#"))
        return {2: "before", 1: "after"}.get(count, f"{count} records")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield Session(tmp_path_factory.mktemp("signals").resolve())


def started(session: Session) -> bool:
    return any((session.work / f"f{n:02d}.txt").read_text() != f"v2 {n}" for n in range(FILES))


MOMENTS = ["first_change", "first_change", 0.0, 0.3, 0.6, 0.9, 1.2, 1.6]


@pytest.mark.parametrize("moment", MOMENTS, ids=[str(moment) + f"-{i}" for i, moment in enumerate(MOMENTS)])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_rewind_leaves_code_conversation_and_checkpoints_together(
    session: Session, sig: signal.Signals, moment: object
) -> None:
    session.reset()
    env = {**session.env, "COMMANDCODE_TEST_STEP_DELAY_MS": "25"}
    process = subprocess.Popen(
        [sys.executable, "-m", "commandcode", "rewind", session.id, "--to", "2", "--mode", "both", "--yes"],
        cwd=session.work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    if moment == "first_change":
        deadline = time.monotonic() + 120  # only detects a hang
        while not started(session) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
    else:
        time.sleep(float(moment))  # type: ignore[arg-type]
    if process.poll() is None:
        os.killpg(process.pid, sig)
    _, err = process.communicate(timeout=300)
    assert "Traceback" not in err, err
    # Exit as asked (or 0 when the signal came after the rewind was done); a signal before
    # Python set its handlers up kills the process outright, which is "before" too.
    assert process.returncode in (0, 130, -signal.SIGINT, -signal.SIGTERM), (process.returncode, err)
    follow = session.run("checkpoints", "list", session.id)
    assert follow.returncode == 0, follow.stderr
    states = (session.files_state(), session.conversation_state(), session.checkpoints_state())
    assert states in (("before",) * 3, ("after",) * 3), (states, process.returncode, err)


def test_an_uninterrupted_rewind_moves_all_three(session: Session) -> None:
    session.reset()
    done = session.run("rewind", session.id, "--to", "2", "--mode", "both", "--yes")
    assert done.returncode == 0, done.stderr
    assert (session.files_state(), session.conversation_state(), session.checkpoints_state()) == ("after",) * 3
