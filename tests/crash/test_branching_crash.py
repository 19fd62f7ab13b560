"""Crash injection for fork, clone, goto and label (`helpers.crash_branching`) and for
`import claude` (`helpers.crash_interop`): real `commandcode` processes SIGKILLed at random
moments; after each kill there is either no new session or a complete one, the source of a fork,
clone or import is byte-identical, and every reported jump, label, copy and import is on disk; and
for the backup rule's blob writes (`helpers.crash_blobs`): no torn blob, no backup lost, every
blob the real CLI needs there after a run that finished."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import crash_harness as harness
from helpers.crash_blobs import BLOB_OPERATIONS
from helpers.crash_branching import BRANCHING_OPERATIONS
from helpers.crash_interop import INTEROP_OPERATIONS

POINTS_PER_OPERATION = 8


@pytest.mark.slow
@pytest.mark.parametrize("operation", BRANCHING_OPERATIONS + INTEROP_OPERATIONS + BLOB_OPERATIONS)
def test_kill_9_at_random_points_breaks_no_promise(tmp_path: Path, operation: str) -> None:
    result = harness.run_lane(operation, tmp_path / operation, POINTS_PER_OPERATION, 20261201, index=False)
    report = harness.report([result], seed=20261201, index=False, elapsed=0.0)
    assert report["violation_list"] == []
    stats = report["operations"][operation]
    assert stats["killed"] >= POINTS_PER_OPERATION // 2, stats
    assert stats["survived"] == stats["killed"], stats
    if operation == "fork":  # every fork that answered lost part of its body to a machine crash, and was repaired
        assert stats["notes"].get("unsynced_bodies_cut", 0) >= max(1, stats["runs"] - stats["killed"]), stats
    if operation in INTEROP_OPERATIONS:  # the imports were there to be checked
        assert stats["notes"].get("checks_with_imports", 0) >= POINTS_PER_OPERATION // 2, stats
