"""The crash harness's text index: the background indexer (`python -m commandcode.catalog.text_index`,
committing every 64 KiB here) and `sessions search` (which builds the index itself) SIGKILLed after
a random delay within a run's duration (SQLite's writes are C calls, out of reach of the
killable CLI's counted kill points).

A workspace holds a few sessions of about 1 MB of text each. After every killed run the checks
are: the catalog passes `PRAGMA integrity_check`; `sessions search` (a real process) answers
with exactly the hits of a search that reads the transcripts directly, and no traceback; the
indexer run that follows (not killed) completes the index (every transcript indexed to its
end); the search answers the same again; no transcript changed.
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

from helpers.crash_catalog_rows import catalog_sound, kill_within
from helpers.crash_workspace import python_path_env, tree_state
from helpers.session_files import sid, write_session

OPERATIONS = ("indexer", "search")
SESSIONS = 4
QUERIES = ("needle", "ÉCOLE", "zz")
INDEXER = ("import sys, commandcode.catalog.text_index as t; t.STEP_BYTES = 64 << 10; "
           "t.index_paths(sys.argv[1:])")


def _env(root: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("COMMANDCODE_")}
    env.update(python_path_env())
    env.update({"COMMANDCODE_HOME": str(root / "home"), "NO_COLOR": "1"})
    return env


def seed(root: Path) -> list[Path]:
    """`SESSIONS` sessions in `root/project`, their prompts long and their needles spread out."""
    from commandcode.config.env import set_home

    (root / "project").mkdir(parents=True)
    set_home(str(root / "home"))
    rng = random.Random(7)
    transcripts = []
    for number in range(SESSIONS):
        prompts = [f"{'filler text ' * rng.randint(2_000, 9_000)} needle {turn} école" for turn in range(12)]
        transcripts.append(write_session(root / "project", sid(number), prompts))
    return transcripts


def _cli(root: Path, args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "commandcode", *args], cwd=root / "project", env=_env(root),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _indexer(root: Path, transcripts: list[Path]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", INDEXER, *map(str, transcripts)], env=_env(root),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _hits(root: Path, query: str, **extra: str) -> tuple[set[tuple[str, str, str, str]], str]:
    env = {**_env(root), **extra}
    completed = subprocess.run([sys.executable, "-m", "commandcode", "sessions", "search", query, "--all-projects", "--json", "--limit",
                                "500"], cwd=root / "project", env=env, capture_output=True, text=True, timeout=300)
    if completed.returncode != 0:
        return set(), completed.stderr
    rows = json.loads(completed.stdout)
    return {(row["session_id"], row["entry_id"], row["kind"], row["snippet"]) for row in rows}, completed.stderr


def _indexed_to_the_end(root: Path, transcripts: list[Path]) -> bool:
    connection = sqlite3.connect(root / "home" / "catalog.sqlite3")
    try:
        done = dict(connection.execute("SELECT path, indexed FROM text_files").fetchall())
    finally:
        connection.close()
    return all(done.get(str(path)) == path.stat().st_size for path in transcripts)


def run_points(root: Path, operation: str, points: int, seed_value: int) -> tuple[int, list[str]]:
    """`points` runs of `operation`, each in a fresh copy of one seeded workspace, killed at a
    random moment and checked; returns `(killed, violations)`."""
    rng = random.Random(seed_value)
    base = root / "seed"
    transcripts = seed(base)
    expected = {query: _hits(base, query, COMMANDCODE_CATALOG="off")[0] for query in QUERIES}
    before = tree_state(base / "home" / "projects")
    started = time.monotonic()
    calibration = _indexer(base, transcripts) if operation == "indexer" else _cli(base, ["sessions", "search", "needle", "--all-projects"])
    calibration.communicate(timeout=300)
    duration = time.monotonic() - started
    shutil.rmtree(base / "home" / "catalog.sqlite3", ignore_errors=True)
    for suffix in ("", "-wal", "-shm", ".text-lock"):
        Path(str(base / "home" / "catalog.sqlite3") + suffix).unlink(missing_ok=True)
    killed, violations = 0, []
    for point in range(points):
        work = root / f"run{point}"
        shutil.copytree(base, work, symlinks=True)
        moved = [work / path.relative_to(base) for path in transcripts]
        process = _indexer(work, moved) if operation == "indexer" else _cli(work, ["sessions", "search", "needle", "--all-projects"])
        killed += kill_within(process, rng.uniform(0.05, 1.0) * duration)
        label = f"{operation} run {point}"
        if not catalog_sound(work / "home" / "catalog.sqlite3"):
            violations.append(f"{label}: the catalog is damaged")
        for query in QUERIES:
            hits, errors = _hits(work, query)
            if hits != expected[query] or "Traceback" in errors:
                violations.append(f"{label}: {query!r} after the kill: {len(hits)} hits, not {len(expected[query])}; "
                                  f"{errors.strip()[:200]}")
        finished = _indexer(work, moved)
        finished.communicate(timeout=300)
        if not _indexed_to_the_end(work, moved):
            violations.append(f"{label}: the next indexer run did not complete the index")
        for query in QUERIES:
            hits, errors = _hits(work, query)
            if hits != expected[query] or errors:
                violations.append(f"{label}: {query!r} after the next run: {len(hits)} hits; {errors.strip()[:200]}")
        if tree_state(work / "home" / "projects") != before:
            violations.append(f"{label}: a transcript changed")
        shutil.rmtree(work, ignore_errors=True)
    return killed, violations
