"""Crash injection for writing a sub-agent run (issue #28, format §21): the writer killed with
SIGKILL at every one of its mutating file-system calls (`tests/support/subagent_run.py`, through
`killable_cli.py`'s kill points). After each kill: the parent session is byte-identical; every run
that is listed opens, holds whole turns only (2, 4 or 6 messages) and reads `interrupted` (its
writer is gone) or `completed` with all six; a run is never listed without its meta; and a new
run can be written beside them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from commandcode.sessions.subagent_runs import list_subagent_runs, run_files
from helpers.cli import cli_env
from helpers.locations import SUPPORT
from helpers.subagents import write_run
from helpers.trees import branched_session


def _write(files: object, workdir: Path, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SUPPORT / "subagent_run.py"), files.folder, files.session_id,  # type: ignore[attr-defined]
                           str(workdir)], env=cli_env(home, **env), capture_output=True, text=True, timeout=120)


def test_a_run_killed_at_every_call_leaves_whole_turns(home: Path, workdir: Path, tmp_path: Path) -> None:
    files, _ = branched_session(workdir)
    parent = files.transcript.read_bytes()
    count_file = tmp_path / "count"
    counted = _write(files, workdir, home, COMMANDCODE_TEST_COUNT_FILE=str(count_file))
    assert counted.returncode == 0, counted.stderr
    calls = int(count_file.read_text())
    assert calls >= 10
    for point in range(1, calls + 1):
        files, _ = branched_session(workdir)  # a parent of its own: each run makes its folders anew
        parent = files.transcript.read_bytes()
        killed = _write(files, workdir, home, COMMANDCODE_TEST_KILL_AT=str(point))
        assert killed.returncode == -9, (point, killed.stderr)
        assert files.transcript.read_bytes() == parent, point
        found = list_subagent_runs(files)
        assert found.warnings == [], (point, found.warnings)
        for run in found.runs:
            assert (run.status, run.message_count) in {("interrupted", 2), ("interrupted", 4), ("interrupted", 6),
                                                       ("completed", 6)}, (point, run)
            meta = json.loads(run_files(files, run.agent_id).meta.read_text())
            assert meta["toolUseId"] == "t4" and meta["agentId"] == run.agent_id, point
    after = write_run(files, str(workdir), tool_use_id="t4")  # a new run beside what the last kill left
    statuses = {run.agent_id: run.status for run in list_subagent_runs(files).runs}
    assert statuses[after.agent_id] == "completed"
