"""Crash injection for `commandcode import claude` (`helpers.crash_interop`): real processes
SIGKILLed at random moments while the backups go into the store and the session is written;
after each kill there is no imported session or a complete one (its checkpoint holding the
backup), a re-import completes or reports the first, and the Claude Code tree is untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import crash_harness as harness
from helpers.crash_interop import INTEROP_OPERATIONS

POINTS_PER_OPERATION = 10


@pytest.mark.slow
@pytest.mark.parametrize("operation", INTEROP_OPERATIONS)
def test_kill_9_at_random_points_breaks_no_promise(tmp_path: Path, operation: str) -> None:
    result = harness.run_lane(operation, tmp_path / operation, POINTS_PER_OPERATION, 20261201, index=False)
    report = harness.report([result], seed=20261201, index=False, elapsed=0.0)
    assert report["violation_list"] == []
    stats = report["operations"][operation]
    assert stats["killed"] >= POINTS_PER_OPERATION // 2, stats
    assert stats["survived"] == stats["killed"], stats
    assert stats["notes"].get("checks_with_imports", 0) >= POINTS_PER_OPERATION // 2, stats  # imports were checked
