"""Sessions pi's own code wrote (`npm` marker): the session-scoped `pi_files` fixture runs
tests/support/pi_sessions.mjs with the installed `@mariozechner/pi-coding-agent` (every entry
type, a branch summary, a compaction, labels, a fork that drops labels, a clone, v1/v2 files)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from helpers.locations import SUPPORT
from helpers.npm_programs import Programs


@pytest.fixture(scope="session")
def pi_files(npm_programs: Programs, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Sessions pi's own `SessionManager` wrote (tests/support/pi_sessions.mjs), made once per
    test run and shared; a test that changes them copies them first."""
    root = tmp_path_factory.mktemp("pi")
    agent, cwd, other = root / "agent", root / "proj", root / "other"
    for folder in (agent, cwd, other):
        folder.mkdir()
    completed = subprocess.run([str(npm_programs.node), str(SUPPORT / "pi_sessions.mjs"), str(npm_programs.pi_package),
                                str(agent), str(cwd), str(other)], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    out: dict[str, Any] = json.loads(completed.stdout)
    out["agent"], out["cwd"], out["other"] = agent, cwd, other
    return out
