"""`sessions du` looks at sidecars with `stat`, reading only what it needs, with bounded memory
(issue 26 §5): a 1 GB sparse sidecar of each kind it reads (checkpoints, meta) is counted at its
size without being read whole (it took 2 GB of memory), and a FIFO, socket or folder in place of
a sidecar is skipped with a mark instead of failing the whole report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import cli_env, run_cli
from helpers.session_files import sid, write_session

GIB = 1 << 30
_MEASURE = ("import resource, subprocess, sys; "
            "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300); "
            "sys.stderr.write(done.stderr); sys.stdout.write(done.stdout); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)")


def _du_json_with_peak(cwd: Path, home: Path) -> tuple[dict[str, object], int]:
    """`sessions du --json` in a parent of its own, so the child's peak memory (KiB) is its own."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "commandcode", "sessions", "du",
                           "--json"], cwd=cwd, env=cli_env(home), capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr
    *messages, peak = done.stderr.strip().splitlines()
    assert "Traceback" not in "\n".join(messages)
    return json.loads(done.stdout), int(peak)


@pytest.mark.parametrize("kind", [".checkpoints.jsonl", ".meta.json", ".share.json"])
def test_a_huge_sparse_sidecar_is_counted_without_being_read(home: Path, workdir: Path, kind: str) -> None:
    write_session(workdir, sid(1), ["one"])
    transcript = write_session(workdir, sid(2), ["two"])
    with open(transcript.with_name(sid(2) + kind), "wb") as handle:
        handle.truncate(GIB)
    report, peak_kib = _du_json_with_peak(workdir, home)
    [row] = [row for row in report["top_sessions"] if row["id"] == sid(2)]  # type: ignore[union-attr]
    assert row["sidecars"] >= GIB
    assert peak_kib < 400 * 1024, f"peak {peak_kib} KiB: the sidecar was read"


@pytest.mark.parametrize("kind", ["fifo", "socket", "folder"])
def test_a_sidecar_that_is_no_file_is_skipped_with_a_mark(home: Path, workdir: Path, kind: str, tmp_path: Path) -> None:
    import socket
    import tempfile

    write_session(workdir, sid(1), ["one"])
    transcript = write_session(workdir, sid(2), ["two"])
    odd = transcript.with_name(sid(2) + ".checkpoints.jsonl")
    if kind == "fifo":
        os.mkfifo(odd)
    elif kind == "folder":
        odd.mkdir()
    else:
        server = socket.socket(socket.AF_UNIX)
        short = Path(tempfile.mkdtemp(dir="/tmp")) / "s"
        server.bind(str(short))
        os.rename(short, odd)
        short.parent.rmdir()
        server.close()
    done = run_cli(["sessions", "du", "--json"], workdir, home, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["skipped"] and str(odd) in report["skipped"][0]
    assert {row["id"] for row in report["top_sessions"]} == {sid(1), sid(2)}
    assert "unknown" in report["sweep_would_free"] or kind == "folder"
    text = run_cli(["sessions", "du"], workdir, home, timeout=120)
    assert text.returncode == 0 and "Traceback" not in text.stderr
    assert f"skipped (not a regular file, not counted): {odd}" in text.stdout
