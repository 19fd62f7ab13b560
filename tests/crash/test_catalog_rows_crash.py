"""Kill -9 during a cold catalog build (`sessions list` over more sessions than one batch): the
catalog stays sound, and the next listing (which continues the build) and the warm one after it
give exactly the folder scan's rows (`tests/helpers/crash_catalog_rows.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.crash_catalog_rows import run_points

POINTS = 4


@pytest.mark.slow
def test_a_killed_cold_catalog_build_is_continued(tmp_path: Path) -> None:
    killed, violations = run_points(tmp_path, POINTS, seed_value=25)
    assert violations == []
    assert killed >= 2, f"only {killed} of {POINTS} runs were killed: the kills missed the build"
