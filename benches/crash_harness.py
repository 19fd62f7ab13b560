#!/usr/bin/env python3
"""The full crash-injection run: real `commandcode` processes SIGKILLed at random moments.

    .venv/bin/python benches/crash_harness.py --points 1000 --seed 1 [--jobs 2] [--index auto|on|off]
                                              [--operations append,first_write,backup,rewind,meta]
                                              [--work DIR] [--json OUT]

The points are spread evenly over the operations (appending a turn, the first write of a new
session, a checkpoint backup, a rewind restore, a meta update); each operation runs in its own
workspaces, in `--jobs` worker processes. After every kill the harness checks every promise the
files make (see `tests/helpers/crash_harness.py`) and prints a JSON report: per operation the runs,
kills, kills survived with every check passing, violations, and kills that came after the result
was already reported. Exit status 1 when any violation was found.

`--text-index-points N` (default 20) also kills the search's text index build that many times per
way it runs (the background indexer, `sessions search` building it; `tests/helpers/crash_text_index.py`):
the catalog must stay sound, every search meanwhile give the transcripts' hits, and the next run
complete the index. Its kills and violations are reported under `text_index`.

`--share-outbox-points N` (default 50) kills that many writers of one share's outbox (queuing rows
and acknowledging them; `tests/helpers/crash_share_outbox.py`): the outbox must stay gapless and
readable, its page one the writer had, its acknowledged mark never go back, and the next process
repeat no row. Reported under `share_outbox`.

`--index auto` (the default) turns the index sidecars on when `_native.scan_session` accepts an
index path, and then also checks that every index gives what a cold scan gives.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers import crash_harness as harness


def _lane(arguments: tuple[str, str, int, int, bool]) -> harness.LaneResult:
    operation, root, points, seed, index = arguments
    return harness.run_lane(operation, Path(root), points, seed, index)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=1000, help="killed runs in all (default 1000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--index", choices=("auto", "on", "off"), default="auto")
    parser.add_argument("--operations", default=",".join(harness.ALL_OPERATIONS))
    parser.add_argument("--work", type=Path, default=None, help="where the workspaces go (default: a temp dir)")
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    parser.add_argument("--text-index-points", type=int, default=20,
                        help="killed text index builds per way (background indexer, search); default 20")
    parser.add_argument("--share-outbox-points", type=int, default=50,
                        help="killed writers of a share's outbox; default 50")
    options = parser.parse_args()

    operations = tuple(name for name in options.operations.split(",") if name)
    unknown = set(operations) - set(harness.ALL_OPERATIONS)
    if unknown:
        parser.error(f"unknown operations: {', '.join(sorted(unknown))}")
    supported = harness.index_supported()
    if options.index == "on" and not supported:
        parser.error("--index on: this build's _native.scan_session takes no index path yet")
    index = supported if options.index == "auto" else options.index == "on"

    work = options.work or Path(tempfile.mkdtemp(prefix="cc-crash-"))
    work.mkdir(parents=True, exist_ok=True)
    # Split each operation's points into as many lanes as there are jobs, so workers stay busy.
    lanes = []
    for operation, count in harness.split_points(options.points, operations).items():
        shares = harness.split_points(count, tuple(f"{operation}{part}" for part in range(options.jobs)))
        for part, share in enumerate(shares.values()):
            if share:
                lanes.append((operation, str(work / f"{operation}-lane{part}"), share, options.seed, index))
    started = time.monotonic()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=options.jobs, mp_context=context) as pool:
        results = list(pool.map(_lane, lanes))
    result = harness.report(results, seed=options.seed, index=index, elapsed=time.monotonic() - started)
    result["points_requested"] = options.points
    side_violations = 0
    if options.text_index_points > 0:
        from helpers.crash_text_index import OPERATIONS as TEXT_INDEX_OPERATIONS
        from helpers.crash_text_index import run_points

        lanes_out: dict[str, object] = {}
        for operation in TEXT_INDEX_OPERATIONS:
            killed, violations = run_points(work / f"text-index-{operation}", operation, options.text_index_points,
                                            options.seed)
            lanes_out[operation] = {"runs": options.text_index_points, "kills": killed, "violations": violations}
            side_violations += len(violations)
        result["text_index"] = lanes_out
    if options.share_outbox_points > 0:
        from helpers.crash_share_outbox import OPERATIONS as OUTBOX_OPERATIONS
        from helpers.crash_share_outbox import run_points as run_outbox_points

        outbox_out: dict[str, object] = {}
        for operation in OUTBOX_OPERATIONS:
            killed, violations = run_outbox_points(work / f"share-outbox-{operation}", operation,
                                                   options.share_outbox_points, options.seed)
            outbox_out[operation] = {"runs": options.share_outbox_points, "kills": killed, "violations": violations}
            side_violations += len(violations)
        result["share_outbox"] = outbox_out
    text = json.dumps(result, indent=2)
    print(text)
    if options.json:
        options.json.write_text(text + "\n")
    return 1 if result["total"]["violations"] or side_violations else 0


if __name__ == "__main__":
    sys.exit(main())
