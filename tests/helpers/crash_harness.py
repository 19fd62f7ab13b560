"""Crash injection: run real `commandcode` processes, SIGKILL them at random moments, then check
every promise the files make. Shared by `tests/crash/test_crash_injection.py` (a small budget in CI)
and `benches/crash_harness.py` (the full run, `--points N --seed S`).

Ten operations (and the branching ones of `helpers.crash_branching`, the Claude Code import of
`helpers.crash_interop`, the interrupted turn of `helpers.crash_interrupt`), each in its own
workspace (a data dir and a project folder):

- `append`: `commandcode -p PROMPT -r SID` on an existing session;
- `first_write`: `commandcode -p PROMPT` starting a new session (its first turn writes a file);
- `backup`: a turn whose `edit_file` calls back up multi-megabyte files first;
- `rewind`: `commandcode rewind SID --to N --mode code --yes` over a few hundred files, and
  about a third of the time `commandcode rewind SID --redo --yes` (undoing the last rewind);
- `shell`: a turn whose `bash` call rewrites, deletes and creates files in a project of a few
  megabytes, so kills land in the shell-tracking baseline (taken while the model is called), in
  the command, and in the records of what it changed;
- `meta`: `commandcode -p PROMPT -r SID -n NAME` (a `session_info` entry and a meta update);
- `export`: `commandcode export SID -o out.(md|html|jsonl)` over an existing export of the same
  name (the target must be the old export or a whole new one, the transcript unchanged).
- `compact`: `commandcode -p LONG_PROMPT -r SID --effort high` in a project whose settings give a
  3,000-token `contextWindow`: an `effort_change` committed on its own, and every other turn or so
  an automatic compaction (a `compaction` entry committed before the turn, then `meta.compaction`).
- `import`: `commandcode import pi PATH --json` of a new pi session (the store, checkpoints, meta
  and the transcript last: a kill leaves no imported session or a complete one).
- `rename`: `commandcode sessions rename SID NAME --json` (the same entry and update, no turn).
- `interrupt` (`helpers.crash_interrupt`): a turn interrupted mid-stream or mid-`bash` as Esc
  does it, committed as far as it got (`tests/support/interrupted_turn.py`).

A point is one run killed either after a random delay (up to the operation's measured duration;
for a rewind also 0-40 ms after its restore journal appears, so kills land inside the native
restore, or in the last quarter of the time before it appears, while the restore verifies and
stores the redo point's objects, or in the settle after the restore's commit returned: before its
`syncfs`, after it and before the journal's removal, or after that removal, held there by
`COMMANDCODE_TEST_SETTLE_PAUSE_MS`) or, through `tests/support/killable_cli.py`, at a random Python-level mutating
file-system call (sometimes mid-write, leaving a torn write). Prompts carry a unique marker; with
`--output-format json` the CLI prints its result only after the turn is committed, so a marker
whose JSON result was read whole before the kill was *reported committed*.

After every point the harness checks (each failure is a violation):

- every transcript of the data dir opens with the library, starts with a whole header line (no
  half-created session), and, with the index on, gives exactly what a cold scan gives;
- every reported-committed marker is in its session, on the active path;
- no line of a transcript is two records glued together;
- every checkpoints line is whole JSON, and every blake3 object a checkpoint names exists;
- every object in the store decompresses and hashes to its name;
- every meta file is a JSON object, and a reported rename is in it;
- after the next open's recovery (`backups.recover_pending`), the project is wholly as before a
  rewind or wholly as after it, with no temp or set-aside file left in it (and, after a kill in
  a settle, no journal, companion copy or journal temp left either);
- a run that was not killed succeeded (so the run after a crash works; a rewind refused because
  our own interrupted restore looks like an outside edit is such a failure).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

from helpers.crash_runs import calibrate, run_point
from helpers.crash_workspace import (
    ALL_OPERATIONS,
    LANE_POINTS,
    OPERATIONS,
    LaneResult,
    OperationStats,
    Workspace,
    data_dir_env,
    index_supported,
    python_path_env,
)

__all__ = ["ALL_OPERATIONS", "OPERATIONS", "LaneResult", "assert_lane_survives", "data_dir_env", "index_supported",
           "python_path_env", "report", "run_lane", "split_points"]


def run_lane(operation: str, root: Path, points: int, seed: int, index: bool, mode: str | None = None) -> LaneResult:
    """Runs `points` killed runs of one operation, in fresh workspaces of `LANE_POINTS` points;
    `mode` makes every kill of that kind (e.g. one of `crash_runs.SETTLE_POINTS`)."""
    rng = random.Random(f"{seed}:{operation}:{root.name}")
    stats = OperationStats()
    violations: list[str] = []
    done = 0
    generation = 0
    while done < points:
        folder = root / f"{operation}-{generation}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        workspace = Workspace(folder, operation, index)
        calibrate(workspace, rng, stats, violations, f"{operation}#{done}/calibrate")
        lane_points = min(LANE_POINTS, points - done)
        for _ in range(lane_points):
            run_point(workspace, rng, stats, violations, f"{operation}#{done}", mode)
            done += 1
        shutil.rmtree(folder, ignore_errors=True)
        generation += 1
    stats.violations = len(violations)
    return LaneResult(operation, stats, violations)


def assert_lane_survives(operation: str, root: Path, points: int, seed: int) -> dict[str, Any]:
    """Runs one operation's lane (no index sidecars): no check is violated, at least half the
    points really killed a run, and every kill was survived; returns the operation's counts."""
    result = run_lane(operation, root, points, seed, index=False)
    report_ = report([result], seed=seed, index=False, elapsed=0.0)
    assert report_["violation_list"] == []
    stats: dict[str, Any] = report_["operations"][operation]
    assert stats["killed"] >= points // 2, stats
    assert stats["survived"] == stats["killed"], stats
    return stats


def split_points(points: int, operations: tuple[str, ...] = ALL_OPERATIONS) -> dict[str, int]:
    """`points` spread over the operations as evenly as possible."""
    base, extra = divmod(points, len(operations))
    return {operation: base + (1 if position < extra else 0) for position, operation in enumerate(operations)}


def report(results: list[LaneResult], *, seed: int, index: bool, elapsed: float) -> dict[str, Any]:
    """The JSON report: counts per operation, then every violation (capped)."""
    per_operation: dict[str, OperationStats] = {}
    violations: list[str] = []
    for result in results:
        per_operation.setdefault(result.operation, OperationStats()).merge(result.stats)
        violations.extend(result.violations)
    total = OperationStats()
    for stats in per_operation.values():
        total.merge(stats)
    return {
        "seed": seed,
        "index": "on" if index else "off",
        "elapsed_seconds": round(elapsed, 1),
        "operations": {name: per_operation[name].to_json() for name in ALL_OPERATIONS if name in per_operation},
        "total": total.to_json(),
        "violation_list": violations[:100],
    }
