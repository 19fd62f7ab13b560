#!/usr/bin/env python3
"""What the backup rule (`checkpoints/blob_rule.py`, issue 32) adds to a `bash` turn, side by side
with compatible backups off, in one run:

    .venv/bin/python benches/bench_blob_rule.py

A 500-file project; five `bash` calls that each change 20 files (16 KB each). Reported: the median
time of `after_shell` (in the turn: the items become sha256 ones, their bytes read back from the
store) and of the write behind it on the tracker's worker (the raw blobs, then the records, both
durable; it overlaps the next model call and `flush` waits for it before the turn is reported).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(tempfile.mkdtemp(prefix="bench-blob-rule-"))
os.environ["COMMANDCODE_HOME"] = str(ROOT / "home")

from commandcode.checkpoints.manager import CheckpointManager
from commandcode.checkpoints.shell_tracking import ShellTracker
from commandcode.config.paths import project_dir
from commandcode.sessions.files import SessionFiles


def run(compatible: bool) -> list[tuple[float, float]]:
    project = ROOT / f"p-{compatible}"
    for n in range(500):
        (project / f"d{n % 10}").mkdir(parents=True, exist_ok=True)
        (project / f"d{n % 10}" / f"f{n}.txt").write_text(f"line {n}\n" * 2000)
    files = SessionFiles(project_dir(project), str(uuid.uuid4()))
    manager = CheckpointManager.for_session(files, project, compatible_backups=compatible)
    manager.shell = ShellTracker(project, manager.store)
    times = []
    for turn in range(6):
        manager.open_checkpoint(f"t{turn}", 0, None)
        manager.shell.before_shell()
        for n in range(20):
            path = project / f"d{n % 10}" / f"f{n + turn * 20}.txt"
            path.write_text(path.read_text() + f"turn {turn}\n")
        start = time.perf_counter()
        changes = len(manager.records[-1].files)
        manager.after_shell()
        middle = time.perf_counter()
        manager.flush()
        times.append((middle - start, time.perf_counter() - middle))
        assert len(manager.records[-1].files) == changes + 20
        manager.shell.start()
    manager.close()
    return times[1:]  # the first call also reads the whole baseline


if __name__ == "__main__":
    for name, measured in (("compatibleBackups off", run(False)), ("compatibleBackups on", run(True))):
        print(f"{name}: after_shell {statistics.median(a for a, _ in measured) * 1000:.1f} ms in the turn, "
              f"{statistics.median(b for _, b in measured) * 1000:.1f} ms behind it")
