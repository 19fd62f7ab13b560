"""The crash harness's share outbox (`sharing/outbox.py`): a process queuing a share's rows
(appends, and resets after a "rewind") and acknowledging them, SIGKILLed at a random moment.

Each point runs a new writer on the outbox the last one left, so the kills pile up on one
outbox. After every kill the checks are: every line but the last is whole JSON; the outbox reads
back as a gapless run of seqs; its page (the rows after the last reset) is one the writer really
had (each row named after its place on the page it was building); the acknowledged mark never
goes back; and the next process queuing the page's own rows adds nothing (no row sent twice).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers.crash_workspace import python_path_env

OPERATIONS = ("queue",)
SHARE_ID = "crash-share"
WRITER = r"""
import random, sys
from commandcode.sharing.outbox import Outbox
box = Outbox(sys.argv[2])
print("ready", flush=True)
generation = int(sys.argv[1])
while True:
    shown = box.shown()
    rows = shown + [f"<p>g{generation}-{len(shown) + index}</p>" for index in range(random.randint(1, 4))]
    if random.random() < 0.1:
        generation += 1
        rows = [f"<p>g{generation}-{index}</p>" for index in range(random.randint(1, 5))]
    box.queue(rows, len(rows))
    box.acknowledge(random.randint(box.sent, box.last()))
"""


def _env(root: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("COMMANDCODE_")}
    env.update(python_path_env())
    env.update({"COMMANDCODE_HOME": str(root / "home"), "NO_COLOR": "1"})
    return env


def _page(entries: list[dict[str, object]]) -> list[str]:
    page: list[str] = []
    for entry in entries:
        if entry["kind"] == "reset":
            page = []
        else:
            page.append(str(entry["html"]))
    return page


def _check(label: str, sent_before: int) -> tuple[int, list[str]]:
    """The outbox after a kill: its acknowledged mark and the violations found."""
    from commandcode.sharing.outbox import Outbox

    box = Outbox(SHARE_ID)
    violations: list[str] = []
    lines = box.path.read_bytes().splitlines() if box.path.exists() else []
    for number, line in enumerate(lines[:-1], 1):
        try:
            json.loads(line)
        except ValueError:
            violations.append(f"{label}: line {number} of the outbox is torn, and it is not the last")
    if [entry["seq"] for entry in box.entries] != list(range(1, box.last() + 1)):
        violations.append(f"{label}: the outbox's seqs have a gap")
    page = box.shown()
    if page != _page(box.entries):
        violations.append(f"{label}: the page is not the rows after the last reset")
    if [row.rsplit("-", 1)[1] for row in page] != [f"{index}</p>" for index in range(len(page))]:
        violations.append(f"{label}: the page is not one the writer had: {page[:6]}")
    if not sent_before <= box.sent <= box.last():
        violations.append(f"{label}: the acknowledged mark went from {sent_before} to {box.sent} (of {box.last()})")
    before = box.last()
    if box.queue(page, len(page)) != 0 or box.last() != before:
        violations.append(f"{label}: queuing the page's own rows again added entries")
    return box.sent, violations


def run_points(root: Path, operation: str, points: int, seed_value: int) -> tuple[int, list[str]]:
    """`points` writers of `operation` on one outbox, each killed after a random delay and
    checked; returns `(killed, violations)`."""
    from commandcode.config.env import set_home

    assert operation in OPERATIONS, operation
    root.mkdir(parents=True, exist_ok=True)
    home_before = os.environ.get("COMMANDCODE_HOME")
    set_home(str(root / "home"))
    try:
        return _run(root, operation, points, seed_value)
    finally:
        if home_before is None:
            os.environ.pop("COMMANDCODE_HOME", None)
        else:
            set_home(home_before)


def _run(root: Path, operation: str, points: int, seed_value: int) -> tuple[int, list[str]]:
    rng = random.Random(seed_value)
    killed, violations, sent, generation = 0, [], 0, 0
    for point in range(points):
        process = subprocess.Popen([sys.executable, "-c", WRITER, str(generation), SHARE_ID], cwd=root,
                                   env=_env(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert process.stdout is not None
        if process.stdout.readline().strip() != "ready":
            process.kill()
            violations.append(f"{operation} run {point}: the writer did not start: {process.communicate()[1][-300:]}")
            continue
        time.sleep(rng.uniform(0.001, 0.08))
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)
        killed += 1
        generation += 100  # a new writer starts a new generation of row names
        sent, found = _check(f"{operation} run {point}", sent)
        violations.extend(found)
    return killed, violations
