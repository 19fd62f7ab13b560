"""The crash harness's catalog rows: a cold `sessions list` (the catalog's rows built from nothing,
in batches, the next batch summarized while one is written) SIGKILLed after a random delay within
a run's duration (SQLite's writes are C calls, out of reach of the killable CLI's counted kill
points).

A workspace holds more sessions than one batch (`catalog.index.BATCH`). After every killed run the
checks are: the catalog passes `PRAGMA integrity_check`; the next `sessions list` (a real process)
gives exactly the rows of a folder scan (`COMMANDCODE_CATALOG=off`), no warning and no traceback,
and so does the one after it (warm); no session file changed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from helpers.crash_workspace import python_path_env, tree_state
from helpers.session_files import write_session

SESSIONS = 2600  # two batches and a part
LIST = ["sessions", "list", "--all", "--all-projects", "--json"]  # a copied workspace has another project folder


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("COMMANDCODE_")}
    env.update(python_path_env())
    env.update({"COMMANDCODE_HOME": str(root / "home"), "NO_COLOR": "1", **extra})
    return env


def seed(root: Path) -> None:
    """`SESSIONS` small sessions in `root/project`, with distinct times and a few names."""
    from commandcode.config.env import set_home

    (root / "project").mkdir(parents=True)
    set_home(str(root / "home"))
    for number in range(SESSIONS):
        session_id = f"{number:08x}-0000-4000-8000-{number:012x}"
        when = f"2026-01-{1 + number % 28:02d}T{number % 24:02d}:{number % 60:02d}:00.000Z"
        write_session(root / "project", session_id, [f"prompt {number}", f"second {number}"], when=when,
                      meta={"title": f"named {number}"} if number % 97 == 0 else None)


def _start(root: Path, **extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "commandcode", *LIST], cwd=root / "project", env=_env(root, **extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _listed(root: Path, **extra: str) -> tuple[list[dict[str, object]] | None, str]:
    out, err = _start(root, **extra).communicate(timeout=600)
    try:
        return json.loads(out), err.decode(errors="replace")
    except ValueError:
        return None, err.decode(errors="replace")


def _forget_catalog(home: Path) -> None:
    for suffix in ("", "-wal", "-shm", ".text-lock"):
        Path(str(home / "catalog.sqlite3") + suffix).unlink(missing_ok=True)


def kill_within(process: subprocess.Popen[bytes], seconds: float) -> bool:
    """Waits for `process` at most `seconds`, then SIGKILLs its group; whether it was killed."""
    try:
        process.wait(timeout=seconds)
        killed = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        killed = True
    process.communicate(timeout=300)
    return killed


def catalog_sound(catalog: Path) -> bool:
    """Whether the catalog (when there is one) passes `PRAGMA integrity_check`."""
    if not catalog.exists():
        return True
    connection = sqlite3.connect(catalog)
    try:
        return bool(connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok")
    finally:
        connection.close()


def run_points(root: Path, points: int, seed_value: int) -> tuple[int, list[str]]:
    """`points` cold listings, each in a fresh copy of one seeded workspace, killed at a random
    moment and checked; returns `(killed, violations)`."""
    rng = random.Random(seed_value)
    base = root / "seed"
    seed(base)
    before = tree_state(base / "home" / "projects")
    started = time.monotonic()
    _listed(base)  # calibration: a whole cold build
    duration = time.monotonic() - started
    _forget_catalog(base / "home")
    killed, violations = 0, []
    for point in range(points):
        work = root / f"run{point}"
        shutil.copytree(base, work, symlinks=True)
        killed += kill_within(_start(work), rng.uniform(0.2, 1.0) * duration)
        label = f"listing run {point}"
        truth, _ = _listed(work, COMMANDCODE_CATALOG="off")
        if not catalog_sound(work / "home" / "catalog.sqlite3"):
            violations.append(f"{label}: the catalog is damaged")
        for attempt in ("next", "warm"):
            rows, errors = _listed(work)
            if not rows or rows != truth or errors:
                violations.append(f"{label}: the {attempt} listing after the kill: "
                                  f"{'no JSON' if rows is None else f'{len(rows)} rows'} (not {len(truth or [])}); "
                                  f"{errors.strip()[:200]}")
        if tree_state(work / "home" / "projects") != before:  # relative paths: comparable across copies
            violations.append(f"{label}: a session file changed")
        shutil.rmtree(work, ignore_errors=True)
    return killed, violations
