"""kill -9 of a process writing a share's outbox (`sharing/outbox.py`), through the crash
harness (`tests/helpers/crash_share_outbox.py`; the full run: `benches/crash_harness.py
--share-outbox-points N`): after every kill the outbox is gapless and readable, its page one the
writer had, its acknowledged mark never goes back, and the next process repeats no row."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.crash_share_outbox import OPERATIONS, run_points

POINTS = 15


@pytest.mark.parametrize("operation", OPERATIONS)
def test_the_outbox_survives_kill_9(tmp_path: Path, operation: str) -> None:
    killed, violations = run_points(tmp_path, operation, POINTS, seed_value=29)
    assert violations == []
    assert killed == POINTS
