"""Kill -9 during `sweep`, `sweep --archive`, `sweep --restore` and `doctor --gc`: nothing
referenced is lost, no partial archive appears, every session is whole or gone, and the next run
finishes the job (`tests/helpers/crash_sweep.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.crash_sweep import OPERATIONS, run_points

POINTS = 6


@pytest.mark.slow
@pytest.mark.parametrize("operation", OPERATIONS)
def test_kill_anywhere_loses_nothing(tmp_path: Path, operation: str) -> None:
    killed, violations = run_points(tmp_path, operation, POINTS, seed_value=18)
    assert violations == []
    assert killed >= POINTS // 2, f"only {killed} of {POINTS} runs were killed: the kill points missed the operation"
