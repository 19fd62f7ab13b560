"""Kill -9 during `sweep`, `sweep --archive`, `sweep --restore` and `doctor --gc`: nothing
referenced is lost, no partial archive appears, every session is whole or gone, and the next run
finishes the job (`tests/helpers/crash_sweep.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.crash_sweep import OPERATIONS, run_points
from helpers.crash_workspace import assert_kill_points_recover

POINTS = 6


@pytest.mark.slow
@pytest.mark.parametrize("operation", OPERATIONS)
def test_kill_anywhere_loses_nothing(tmp_path: Path, operation: str) -> None:
    assert_kill_points_recover(run_points, tmp_path, operation, points=POINTS, seed_value=18, least=POINTS // 2)
