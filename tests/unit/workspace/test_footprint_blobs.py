"""`sessions du` and the raw sha256 blobs of `file-history/` (`checkpoints.compatibleBackups`, on
by default: hard links to one shared copy in `raw-objects/`): a blob linked from two sessions is
counted once, apart (`shared_blobs`), one session's own blob is its `blobs`, the blobs are not
sidecars, the data dir's total counts a hard-linked file once (as `du -sb`), and `sessions
status` (what `/status` shows) has the session's disk line."""

from __future__ import annotations

import subprocess
from pathlib import Path

from commandcode.workspace.footprint import human
from helpers.cli import run_cli, run_json, run_ok
from helpers.workspace import age_session, make_session


def _no_shell_tracking(project: Path) -> None:
    (project / ".commandcode").mkdir(exist_ok=True)
    (project / ".commandcode" / "settings.json").write_text('{"checkpoints": {"trackShell": false}}\n')


def test_shared_raw_blobs_are_counted_once(home: Path, workdir: Path) -> None:
    _no_shell_tracking(workdir)
    same = "the same bytes\n" * 200
    (workdir / "shared.txt").write_text(same)
    first = make_session(home, workdir, 'call write_file {"file_path": "shared.txt", "content": "one\\n"}')
    (workdir / "shared.txt").write_text(same)
    second = make_session(home, workdir, 'call write_file {"file_path": "shared.txt", "content": "two\\n"}')
    (workdir / "own.txt").write_text("only the second\n" * 70)
    run_ok(["-p", 'call write_file {"file_path": "own.txt", "content": "x\\n"}', "-r", second.stem], workdir, home)
    blobs = {path.parent.name: sorted(path.parent.iterdir()) for path in (home / "file-history").rglob("*") if path.is_file()}
    assert len(blobs[first.stem]) == 1 and len(blobs[second.stem]) == 2
    assert blobs[first.stem][0].stat().st_nlink == 3  # two sessions and the shared copy in raw-objects/
    report = run_json(["sessions", "du", "--json"], workdir, home)
    rows = {row["id"]: row for row in report["top_sessions"]}
    assert rows[first.stem]["blobs"] == 0 and rows[first.stem]["shared_blobs"] == len(same)
    assert rows[second.stem]["blobs"] == len("only the second\n" * 70)
    assert rows[second.stem]["shared_blobs"] == len(same)
    assert report["shared_blobs"] == len(same)  # once, not per session
    assert report["projects"][0]["blobs"] == len("only the second\n" * 70)
    sidecars = sum(first.with_name(first.stem + suffix).stat().st_size for suffix in (".meta.json", ".checkpoints.jsonl"))
    assert rows[first.stem]["sidecars"] == sidecars  # the blobs are not sidecars
    du = subprocess.run(["du", "-sb", str(home)], capture_output=True, text=True, check=True, timeout=60)
    folders = sum(path.stat().st_size for path in [home, *home.rglob("*")] if path.is_dir())
    assert report["data_dir_total"] == int(du.stdout.split()[0]) - folders  # du's count of the files, links once
    text = run_cli(["sessions", "du"], workdir, home)
    assert text.returncode == 0 and "raw sha256 blobs" in text.stdout and human(len(same)) in text.stdout
    age_session(first, 40)  # a sweep would take the first session: its blob stays linked by the second
    free = run_json(["sessions", "du", "--json"], workdir, home)["sweep_would_free"]
    assert free["sessions"] == 1
    assert free["bytes"] == rows[first.stem]["transcript"] + sidecars  # not the shared blob's bytes


def test_sessions_status_shows_the_disk_line(home: Path, workdir: Path) -> None:
    (workdir / "a.txt").write_text("a" * 3000)
    transcript = make_session(home, workdir, 'call write_file {"file_path": "a.txt", "content": "b"}')
    status = run_json(["sessions", "status", transcript.stem, "--json"], workdir, home)
    assert status["disk"].startswith(f"{human(transcript.stat().st_size)} transcript · ")
    assert "checkpoints" in status["disk"] and "0 B checkpoints" not in status["disk"]
    text = run_ok(["sessions", "status", transcript.stem], workdir, home).stdout
    assert f"disk: {human(transcript.stat().st_size)} transcript" in text
