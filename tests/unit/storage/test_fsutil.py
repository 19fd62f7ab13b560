"""`fsutil.atomic_write` cleans up after writers that were killed before their rename, and only
after them: a temp file of a live process, a fresh one, or anything not named `<name>.<pid>.tmp`
is left alone."""

from __future__ import annotations

import os
import time
from pathlib import Path

from commandcode.storage.durable import STALE_TEMPORARY_SECONDS, atomic_write

NO_SUCH_PID = 99_999_999  # above any Linux pid_max: os.kill says ESRCH


def _aged(path: Path, data: bytes, seconds: float) -> Path:
    path.write_bytes(data)
    moment = time.time() - seconds
    os.utime(path, (moment, moment))
    return path


def test_the_next_write_removes_only_a_dead_writers_old_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "s.meta.json"
    old = STALE_TEMPORARY_SECONDS * 10
    stale = _aged(tmp_path / f"s.meta.json.{NO_SUCH_PID}.tmp", b"half", old)
    fresh = _aged(tmp_path / f"s.meta.json.{NO_SUCH_PID - 1}.tmp", b"being written elsewhere", 1)
    live = _aged(tmp_path / f"s.meta.json.{os.getppid()}.tmp", b"our parent's", old)
    users = _aged(tmp_path / "s.meta.json.backup.tmp", b"not ours", old)
    other = _aged(tmp_path / f"other.json.{NO_SUCH_PID}.tmp", b"another target's", old)
    atomic_write(target, b"{}")
    assert target.read_bytes() == b"{}"
    assert not stale.exists()
    assert fresh.read_bytes() == b"being written elsewhere"
    assert live.read_bytes() == b"our parent's"
    assert users.read_bytes() == b"not ours"
    assert other.read_bytes() == b"another target's"


def test_a_stale_temp_name_that_is_a_symlink_is_removed_without_touching_its_target(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / f"m.json.{NO_SUCH_PID}.tmp"
    link.symlink_to(victim)
    old = time.time() - STALE_TEMPORARY_SECONDS * 10
    os.utime(link, (old, old), follow_symlinks=False)
    atomic_write(tmp_path / "m.json", b"[]")
    assert not link.is_symlink() and victim.read_text() == "keep me"
