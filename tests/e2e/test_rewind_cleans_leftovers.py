"""A bare `commandcode rewind` removes the temp files killed writes of the session left, as the
open of a turn does (issue 28; `checkpoints/leftovers.py`): a rewind is often the first thing
run after a crash, and no turn opens before it. Real `commandcode` processes, real files; the
temps are named with the pid of a process that is gone, as a kill -9 leaves them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from commandcode.sessions.files import SessionFiles
from commandcode.sessions.subagent_runs import subagents_dir
from helpers.cli import run_ok
from helpers.subagent_prompts import call
from helpers.workspace import make_session


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_a_cli_rewind_removes_the_temps_killed_writes_left(home: Path, workdir: Path) -> None:
    """On ea0e990 every one of them stayed after the rewind (only a turn's open removed them)."""
    (workdir / "x.txt").write_text("before\n")
    transcript = make_session(home, workdir, call("write_file", file_path="x.txt", content="after\n"))
    assert (workdir / "x.txt").read_text() == "after\n"
    files = SessionFiles.for_transcript(transcript)
    dead, sid = _dead_pid(), files.session_id
    runs = Path(subagents_dir(files))
    runs.mkdir(parents=True)
    stale = [workdir / f".x.txt.{dead}.0badcafe.tmp", files.directory / f"{sid}.checkpoints.jsonl.{dead}.tmp",
             files.directory / f".{sid}.jsonl.{dead}.tmp", runs / f"agent-bg-1-0badcafe.meta.json.{dead}.tmp"]
    kept = [workdir / f".y.txt.{dead}.0badcafe.tmp",  # beside no file the session backed up
            workdir / f"x.txt.{dead}.tmp",  # not the edit tools' pattern: may be the user's
            files.directory / f"other-session.meta.json.{dead}.tmp"]  # another session's
    for path in [*stale, *kept]:
        path.write_text("partial")
    preview = run_ok(["rewind", sid, "--to", "1", "--mode", "code", "--dry-run", "--json"], workdir, home)
    assert json.loads(preview.stdout) and all(path.exists() for path in stale)  # a preview writes nothing
    run_ok(["rewind", sid, "--to", "1", "--mode", "code", "--yes"], workdir, home)
    assert (workdir / "x.txt").read_text() == "before\n"
    assert [path.name for path in stale if os.path.lexists(path)] == []
    assert [path.name for path in kept if not path.exists()] == []
