"""`sessions du` and the raw blobs `checkpoints.compatibleBackups` keeps for the real CLI: one
shared copy per content, hard-linked into each session's `file-history/<sid>/`, is shown once
(`shared_blobs`), not again as each session's sidecar, and the data dir's total
counts each inode once, as `du` does."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from helpers.cli import run_cli, run_json
from helpers.workspace import make_session


def _du_total(root: Path) -> int:
    seen: dict[tuple[int, int], int] = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            status = path.lstat()
            seen[(status.st_dev, status.st_ino)] = status.st_size
    return sum(seen.values())


def test_shared_raw_copies_are_counted_once(home: Path, workdir: Path) -> None:
    content = b"the same bytes\n" * 200
    sessions = []
    for reply in ("one", "two"):
        (workdir / "shared.txt").write_bytes(content)
        sessions.append(make_session(home, workdir, 'call write_file {"file_path": "shared.txt", "content": "%s\\n"}'
                                     % reply))
    digest = hashlib.sha256(content).hexdigest()
    shared = home / "raw-objects" / digest[:2] / digest
    links = [home / "file-history" / transcript.stem / digest for transcript in sessions]
    assert shared.stat().st_nlink == 3 and all(os.path.samefile(link, shared) for link in links)
    report = run_json(["sessions", "du", "--json"], workdir, home)
    assert report["shared_blobs"] == len(content)
    rows = {row["id"]: row for row in report["top_sessions"]}
    for transcript in sessions:
        own = sum(transcript.with_name(transcript.stem + suffix).stat().st_size
                  for suffix in (".meta.json", ".checkpoints.jsonl", ".shell-baseline.json")
                  if transcript.with_name(transcript.stem + suffix).exists())
        assert rows[transcript.stem]["sidecars"] == own  # the linked blob is not the session's
    naive = sum(path.stat().st_size for path in home.rglob("*") if path.is_file() and not path.is_symlink())
    assert report["data_dir_total"] == _du_total(home) == naive - 2 * len(content)
    text = run_cli(["sessions", "du"], workdir, home)
    assert text.returncode == 0 and "raw sha256 blobs" in text.stdout
    # a blob the real CLI wrote itself (no link) is its session's own blob, not shared
    links[0].unlink()
    links[0].write_bytes(content)
    mine = run_json(["sessions", "du", "--json"], workdir, home)
    row = next(row for row in mine["top_sessions"] if row["id"] == sessions[0].stem)
    assert row["sidecars"] == rows[sessions[0].stem]["sidecars"] and row["blobs"] == len(content)
