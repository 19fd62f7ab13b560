#!/usr/bin/env python3
"""The work a verified 1,000-file rewind and its redo do in Python, counted: steady on any machine.

    python benches/count_rewind_work.py --project /tmp/rw4/project --work /tmp/rwcount

Sets up a copy of `--project` as `compare_rewind.py` does (1,000 edited files backed up), runs
one rewind and redo to warm up, then one more of each and counts, for each: the Python function
calls (cProfile's total: each costs the interpreter time, so fewer calls is less time on any
machine), the listings of the session's real-CLI blob folder (`os.scandir` of `file-history/`),
and the reads of the checkpoints file. Where timings taken on a loaded machine cannot resolve a
millisecond, these counts can: run it with each build's python and compare the rows.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/rwcount"))
    arguments = parser.parse_args()

    import bench_checkpoints as bench
    import compare_rewind
    from commandcode.checkpoints import store as backups
    from commandcode.storage import regular

    session, project, _, _, records = compare_rewind.edited_project(arguments.project, arguments.work)
    operations = compare_rewind._rewind_and_redo(session, project, backups.BackupStore())
    for operation in operations:
        bench.wait_for_trash_removal()
        operation()
    session.checkpoints.write_bytes(records)
    listed: list[str] = []
    opened: list[str] = []
    scandir, open_regular = os.scandir, regular.open_regular

    def counted_scandir(path: Any = ".") -> Any:
        listed.append(os.fspath(path))
        return scandir(path)

    def counted_open(path: Any, *positional: Any, **keywords: Any) -> Any:
        opened.append(os.fspath(path))
        return open_regular(path, *positional, **keywords)

    os.scandir = counted_scandir  # type: ignore[assignment]
    regular.open_regular = counted_open  # type: ignore[assignment]
    checkpoints, blobs = os.fspath(session.checkpoints), os.fspath(session.file_history)
    for name, operation in zip(("rewind", "redo"), operations):
        bench.wait_for_trash_removal()
        listed.clear()
        opened.clear()
        profile = cProfile.Profile()
        profile.enable()
        operation()
        profile.disable()
        print(name, f"python_calls={pstats.Stats(profile).total_calls}",  # type: ignore[attr-defined]
              f"blob_folder_listings={listed.count(blobs)}", f"checkpoints_reads={opened.count(checkpoints)}",
              flush=True)
    os.scandir, regular.open_regular = scandir, open_regular  # type: ignore[assignment]
    shutil.rmtree(arguments.work, ignore_errors=True)


if __name__ == "__main__":
    main()
