"""`.ci/run`'s exit trap: a run that fails before its tests stops what it started in the
background, the install of the tests' tools (apt, npm) included, not only the Rust lanes.

The script runs for real, copied into a scratch checkout (it `cd`s to its own checkout and
writes `.ci-cache/npm/` there: never this worktree's, a link to the shared install), with fakes
first on PATH: `cargo` passes, `apt-get` and `npm` record their pid and sleep as a long download
does, and `python3` (the run's `venv` step) fails once one of them has started.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from helpers.locations import REPO

FAKES = {
    "cargo": "#!/bin/sh\nexit 0\n",
    # a download: records its pid, then waits far longer than the run
    "npm": '#!/bin/sh\necho $$ >>"$FAKE_STARTED"\nexec sleep 600\n',
    "apt-get": '#!/bin/sh\necho $$ >>"$FAKE_STARTED"\nexec sleep 600\n',
    # the venv step: fails, once the background install is under way
    "python3": '#!/bin/sh\nwhile [ ! -s "$FAKE_STARTED" ]; do sleep 0.05; done\necho "no venv" >&2\nexit 1\n',
}


def _alive(pid: int) -> bool:
    """Whether `pid` is a running process (a zombie awaiting its reaper counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_run_failing_before_the_tests_stops_the_background_install(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy2(REPO / ".ci" / "run", checkout / ".ci" / "run")
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    for name, body in FAKES.items():
        (fakes / name).write_text(body)
        (fakes / name).chmod(0o755)
    started = tmp_path / "started"
    env = {**os.environ, "PATH": f"{fakes}:{os.environ['PATH']}", "FAKE_STARTED": str(started)}
    pids: list[int] = []
    try:
        run = subprocess.run([str(checkout / ".ci" / "run")], env=env, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=120)
        assert run.returncode != 0, run.stderr
        assert "+ python3 -m venv .ci-venv" in run.stderr  # it failed where the fake made it fail
        pids = [int(line) for line in started.read_text().split()]
        assert pids
        # The trap signalled them before the script exited; their ending is the kernel's to finish
        # (a sleeping process ends at once). A survivor would sleep on for ten minutes.
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in pids if _alive(pid)] == [], "the install outlived the failed run"
    finally:
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
