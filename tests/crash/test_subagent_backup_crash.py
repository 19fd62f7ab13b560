"""Crash injection for sub-agents writing into the parent's checkpoint (`helpers.crash_subagents`):
a headless turn of parallel and background runs editing, creating and changing files with `bash`,
killed at random moments (timed, or at a random file-system call, sometimes mid-write). After each
kill the run's checkpoint rewinds the tree to exactly what it was, and no transcript (the parent's
or a run's) holds a half-written step."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import crash_harness as harness

POINTS = 10


@pytest.mark.slow
def test_kill_9_during_sub_agent_writes_leaves_backups_that_restore(tmp_path: Path) -> None:
    harness.assert_lane_survives("subagents", tmp_path / "subagents", POINTS, 20261205)
