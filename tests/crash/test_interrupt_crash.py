"""Crash injection for the interrupted turn (`helpers.crash_interrupt`): a turn the user
interrupts commits what was said so far in one append; killed at random moments (timed, or at a
random file-system call, sometimes mid-write), the transcript holds the whole interrupted turn or
none of it, never a torn one, and every turn reported committed is there."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import crash_harness as harness

POINTS = 10


@pytest.mark.slow
def test_kill_9_during_an_interrupted_turn_leaves_it_whole_or_absent(tmp_path: Path) -> None:
    harness.assert_lane_survives("interrupt", tmp_path / "interrupt", POINTS, 20261205)
