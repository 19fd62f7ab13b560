"""The transcripts are the truth: a transcript appended, truncated or replaced behind the catalog's
back (also with the same size, mtime and inode), an index sidecar that lies, a catalog that is a
FIFO or read-only. The listing and `-r NAME`/`-c` resolve what the files say now, with one warning
line at most, and no session file is rewritten or deleted. Real processes (`python -m commandcode`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from commandcode.config.paths import catalog_file, index_root, project_dir
from helpers.cli import run_cli, run_json, snapshot
from helpers.session_files import append_turn, sid, write_session

NAME_LINE = '{"type":"session_info","id":"name0001","parentId":"00000002","timestamp":"2026-01-02T03:04:06.000Z","name":"%s"}\n'


def _named(workdir: Path, number: int, name: str, prompt: str = "first prompt") -> Path:
    transcript = write_session(workdir, sid(number), [prompt], when=f"2026-01-0{number}T00:00:00.000Z")
    with transcript.open("a") as handle:
        handle.write(NAME_LINE % name)
    return transcript


def _truth(workdir: Path, home: Path) -> list[dict[str, object]]:
    completed = run_cli(["sessions", "list", "--all", "--json"], workdir, home, COMMANDCODE_CATALOG="off",
                        COMMANDCODE_INDEX="off")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)  # type: ignore[no-any-return]


def _listed(workdir: Path, home: Path, **env: str) -> tuple[list[dict[str, object]], list[str]]:
    completed = run_cli(["sessions", "list", "--all", "--json"], workdir, home, **env)
    assert completed.returncode == 0 and "Traceback" not in completed.stderr, completed.stderr
    return json.loads(completed.stdout), completed.stderr.splitlines()


def _rewrite_in_place(transcript: Path, old: bytes, new: bytes) -> None:
    """Same inode, same size, same mtime: only the bytes (and the ctime) change."""
    assert len(old) == len(new)
    status = transcript.stat()
    data = transcript.read_bytes()
    assert old in data
    with transcript.open("r+b") as handle:
        handle.write(data.replace(old, new))
    os.utime(transcript, ns=(status.st_atime_ns, status.st_mtime_ns))
    after = transcript.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (status.st_size, status.st_mtime_ns, status.st_ino)


def _replace(transcript: Path, old: bytes, new: bytes) -> None:
    """A new file renamed over it: another inode, the same size and mtime."""
    status = transcript.stat()
    fresh = transcript.with_suffix(".tmp")
    fresh.write_bytes(transcript.read_bytes().replace(old, new))
    os.utime(fresh, ns=(status.st_atime_ns, status.st_mtime_ns))
    os.replace(fresh, transcript)


CHANGES = ["appended", "truncated", "rewritten-same-size-mtime-inode", "replaced-same-size-mtime"]


@pytest.mark.parametrize("change", CHANGES)
def test_a_transcript_changed_behind_the_catalogs_back(home: Path, workdir: Path, change: str) -> None:
    one = _named(workdir, 1, "alpha")
    _named(workdir, 2, "bravo")
    listed, warnings = _listed(workdir, home)
    assert listed == _truth(workdir, home) and warnings == []
    if change == "appended":
        append_turn(one, 9, "appended later", when="2026-01-09T00:00:00.000Z")
    elif change == "truncated":
        one.write_bytes(b"".join(one.read_bytes().splitlines(keepends=True)[:2]))  # the header and the prompt
    elif change == "rewritten-same-size-mtime-inode":
        _rewrite_in_place(one, b'"name":"alpha"', b'"name":"omega"')
    else:
        _replace(one, b'"name":"alpha"', b'"name":"omega"')
    before = snapshot(project_dir(workdir))
    listed, warnings = _listed(workdir, home)
    assert listed == _truth(workdir, home) and warnings == []
    assert snapshot(project_dir(workdir)) == before  # nothing rewritten or deleted
    rows = {row["id"]: row for row in listed}
    if change == "appended":
        assert rows[sid(1)]["last_prompt"] == "appended later" and rows[sid(1)]["message_count"] == 4
    elif change == "truncated":
        assert rows[sid(1)]["message_count"] == 1 and rows[sid(1)]["name"] is None
    else:
        assert rows[sid(1)]["name"] == "omega"
        # resolving by name goes through the same rows: the new name resumes it, the old one is gone
        resumed = run_cli(["-p", "hello", "-r", "omega", "--output-format", "json"], workdir, home)
        assert resumed.returncode == 0 and json.loads(resumed.stdout)["session_id"] == sid(1), resumed.stderr
        gone = run_cli(["-p", "hello", "-r", "alpha"], workdir, home)
        assert gone.returncode != 0 and "no session matches 'alpha'" in gone.stderr


def _big(workdir: Path, number: int, name: str) -> Path:
    """A transcript over 1 MiB: listings go through its index sidecar."""
    transcript = write_session(workdir, sid(number), [f"prompt {turn} " + "x" * 60_000 for turn in range(20)],
                               when=f"2026-01-0{number}T00:00:00.000Z")
    with transcript.open("a") as handle:
        handle.write(NAME_LINE.replace("00000002", "00130002") % name)
    assert transcript.stat().st_size > 1 << 20
    return transcript


@pytest.mark.parametrize("lie", ["another-sessions-sidecar", "garbage", "transcript-rewritten-under-it"])
def test_a_sidecar_that_lies_is_not_believed(home: Path, workdir: Path, lie: str) -> None:
    one, two = _big(workdir, 1, "alpha"), _big(workdir, 2, "bravo")
    listed, _ = _listed(workdir, home, COMMANDCODE_INDEX="on")
    assert {row["name"] for row in listed} == {"alpha", "bravo"}
    sidecars = Path(index_root()) / project_dir(workdir).name
    ours, theirs = sidecars / f"{sid(1)}.idx", sidecars / f"{sid(2)}.idx"
    assert ours.is_file() and theirs.is_file()
    for suffix in ("", "-wal", "-shm"):  # no catalog: the sidecars alone must not mislead
        Path(catalog_file() + suffix).unlink(missing_ok=True)
    if lie == "another-sessions-sidecar":
        shutil.copyfile(theirs, ours)
    elif lie == "garbage":
        ours.write_bytes(b"\x00garbage" * 1000)
    else:
        _rewrite_in_place(one, b'"name":"alpha"', b'"name":"omega"')
    before = snapshot(project_dir(workdir))
    listed, warnings = _listed(workdir, home, COMMANDCODE_INDEX="on")
    assert listed == _truth(workdir, home) and warnings == []
    assert {row["name"] for row in listed} == {"omega" if lie.startswith("transcript") else "alpha", "bravo"}
    assert snapshot(project_dir(workdir)) == before
    assert two.read_bytes().count(b"bravo") == 1


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _read_only(path: Path) -> None:
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip("root without chattr +i: a file cannot be made read-only for this process")
    else:
        path.chmod(0o400)


@pytest.mark.parametrize("kind", ["fifo", "read-only"])
def test_a_catalog_that_cannot_be_written_or_read_is_one_warning(home: Path, workdir: Path, kind: str) -> None:
    _named(workdir, 1, "alpha")
    good = run_json(["sessions", "list", "--all", "--json"], workdir, home)
    path = Path(catalog_file())
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    if kind == "fifo":
        _fifo(path)
    else:
        run_json(["sessions", "list", "--all", "--json"], workdir, home)  # a catalog with the row
        _named(workdir, 2, "bravo")  # a change the listing would have to write
        good = _truth(workdir, home)
        _read_only(path)
    try:
        before = snapshot(project_dir(workdir))
        listed, warnings = _listed(workdir, home)
        assert listed == good
        assert len(warnings) == 1 and warnings[0].startswith("warning: the session catalog cannot be used"), warnings
        assert snapshot(project_dir(workdir)) == before
        resumed = run_cli(["-p", "hello", "-r", "alpha", "--output-format", "json"], workdir, home)
        assert resumed.returncode == 0 and json.loads(resumed.stdout)["session_id"] == sid(1), resumed.stderr
        assert sum(line.startswith("warning: the session catalog") for line in resumed.stderr.splitlines()) <= 1
        if kind == "fifo":
            assert path.exists() and not path.is_file()  # left as it is
    finally:
        if kind == "read-only" and os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
