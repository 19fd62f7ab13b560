"""Kill -9 during the background text indexer and during `sessions search`'s own index build:
the catalog stays sound, every search meanwhile gives the transcripts' hits, and the next run
completes the index (`tests/helpers/crash_text_index.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.crash_text_index import OPERATIONS, run_points
from helpers.crash_workspace import assert_kill_points_recover

POINTS = 5


@pytest.mark.slow
@pytest.mark.parametrize("operation", OPERATIONS)
def test_a_killed_text_index_build_is_continued(tmp_path: Path, operation: str) -> None:
    assert_kill_points_recover(run_points, tmp_path, operation, points=POINTS, seed_value=25, least=2)
