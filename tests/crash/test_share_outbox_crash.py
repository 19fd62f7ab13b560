"""kill -9 of a process writing a share's outbox (`sharing/outbox.py`): queuing rows (appends,
and resets after a "rewind"), and acknowledging them, killed at random moments. After every kill
the outbox reads back as a gapless run of seqs whose page (the rows after the last reset) is a
state the writer really had, its acknowledged mark never goes back, and the next process queues
on from there without repeating a row."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers.cli import cli_env

WRITER = r"""
import random, sys
from commandcode.sharing.outbox import Outbox
box = Outbox("crash-share")
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


def _page(entries: list[dict[str, object]]) -> list[str]:
    page: list[str] = []
    for entry in entries:
        if entry["kind"] == "reset":
            page = []
        else:
            page.append(str(entry["html"]))
    return page


def test_the_outbox_survives_kill_9(home: Path, workdir: Path) -> None:
    from commandcode.sharing.outbox import Outbox

    env = cli_env(home)
    rng = random.Random(29)
    sent_before, generation = 0, 0
    for point in range(15):
        process = subprocess.Popen([sys.executable, "-c", WRITER, str(generation)], cwd=workdir, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert process.stdout is not None and process.stdout.readline().strip() == "ready", process.stderr
        time.sleep(rng.uniform(0.001, 0.08))
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        generation += 100  # a new writer starts a new generation of row names
        box = Outbox("crash-share")
        lines = box.path.read_bytes().splitlines() if box.path.exists() else []
        for line in lines[:-1]:
            json.loads(line)  # only the last line may be torn
        assert [entry["seq"] for entry in box.entries] == list(range(1, box.last() + 1))
        page = box.shown()
        assert page == _page(box.entries)
        # every row the writer queued was named after its place on the page it was building
        assert [row.rsplit("-", 1)[1] for row in page] == [f"{index}</p>" for index in range(len(page))], (point, page)
        assert sent_before <= box.sent <= box.last(), "the acknowledged mark never goes back"
        sent_before = box.sent
        before = box.last()
        if box.queue(page, len(page)) != 0:  # the same rows again: nothing more to send
            raise AssertionError(f"point {point}: re-queuing the page's own rows added entries")
        assert box.last() == before
