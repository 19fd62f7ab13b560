"""Holding the catalog locked from another process, as a concurrent writer would (`BEGIN EXCLUSIVE`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HOLDER = ("import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
          "c.execute('BEGIN EXCLUSIVE'); print('ready', flush=True); time.sleep(120)")


@contextmanager
def catalog_locked(path: Path) -> Iterator[None]:
    """The catalog at `path` locked by another process until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        yield
    finally:
        holder.kill()
        holder.wait()
