"""A FIFO, a socket, a character device (/dev/zero's numbers) or a folder planted in the place
(or a symlink to /dev/zero) of each kind of file the data dir holds — transcript, meta.json, checkpoints.jsonl, the index
sidecar, history.jsonl, the writer lock, the restore journal and its lock, a store object, the
store's config and external-checkpoints list — and every command run against it: never a hang
(a timeout detects one), never a traceback, exit 0 with a result or exit 1 with an `error:` line,
and the planted thing left exactly as it was.

The world (two turns with a checkpointed edit, an index sidecar) is built once and copied for
each case, so its absolute paths (the transcript header's cwd) stay the same.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import cli_env

KINDS = ("fifo", "socket", "chardev", "folder", "zero_link")
HANG_SECONDS = 60


def _run(args: list[str], cwd: Path, data: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=cwd,
                              env=cli_env(data, COMMANDCODE_INDEX="on"), capture_output=True, text=True,
                              timeout=HANG_SECONDS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"commandcode {' '.join(args)} hung (no exit within {HANG_SECONDS} s)")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("planted")
    live, saved = root / "live", root / "saved"
    project, data = live / "proj", live / "data"
    project.mkdir(parents=True)
    first = _run(["-p", 'call write_file {"file_path": "a.txt", "content": "one\\n"}', "--output-format", "json"],
                 project, data)
    assert first.returncode == 0, first.stderr
    sid = json.loads(first.stdout)["session_id"]
    second = _run(["-c", "-p", 'call edit_file {"file_path": "a.txt", "old_string": "one", "new_string": "two"}'],
                  project, data)
    assert second.returncode == 0, second.stderr
    assert _run(["sessions", "show", sid], project, data).returncode == 0  # writes the index sidecar
    [folder] = (data / "projects").iterdir()
    [sidecar] = [path for path in (data / "index").rglob("*") if path.is_file()]
    [lock] = list((data / "locks").iterdir())
    objects = sorted(path for path in (data / "objects").rglob("*") if path.is_file() and len(path.name) > 40)
    assert objects, "the edit stored a backup object"
    places = {
        "transcript": folder / f"{sid}.jsonl",
        "meta": folder / f"{sid}.meta.json",
        "checkpoints": folder / f"{sid}.checkpoints.jsonl",
        "index_sidecar": sidecar,
        "history": data / "history.jsonl",
        "writer_lock": lock,
        "journal": data / "journals" / f"{sid}.json",
        "journal_lock": data / "journals" / f"{sid}.json.lock",
        "store_object": objects[0],
        "store_config": data / "objects" / "config",
        "external_checkpoints": data / "objects" / "external-checkpoints.txt",
    }
    shutil.copytree(live, saved, symlinks=True)
    yield {"live": live, "saved": saved, "project": project, "data": data, "sid": sid, "places": places}


PLACES = ("transcript", "meta", "checkpoints", "index_sidecar", "history", "writer_lock", "journal", "journal_lock",
          "store_object", "store_config", "external_checkpoints")


def _plant(path: Path, kind: str) -> socket.socket | None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "chardev":
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero: reads without end
    elif kind == "zero_link":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
        (path / "inside").write_text("kept\n")
    else:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        previous = os.getcwd()
        os.chdir(path.parent)  # a socket path must stay under 108 bytes: bind a relative name
        try:
            server.bind(path.name)
        finally:
            os.chdir(previous)
        server.listen(1)
        return server
    return None


def _state(path: Path) -> tuple[Any, ...]:
    status = os.lstat(path)
    listing = sorted(os.listdir(path)) if stat.S_ISDIR(status.st_mode) else None
    return (stat.S_IFMT(status.st_mode), status.st_ino, status.st_mode, status.st_rdev, listing)


def _check(completed: subprocess.CompletedProcess[str], args: list[str]) -> None:
    shown = f"{args}: exit {completed.returncode}\nstdout: {completed.stdout[-1500:]}\nstderr: {completed.stderr[-1500:]}"
    assert "Traceback" not in completed.stderr, shown
    assert completed.returncode in (0, 1), shown
    if completed.returncode == 1:
        lines = [line for line in completed.stderr.splitlines() if not line.startswith("warning: ")]
        assert lines and lines[0].startswith("error: ") and len(lines) <= 2, shown
        assert all(line.startswith("hint: ") for line in lines[1:]), shown


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("place", PLACES)
def test_every_command_against_a_planted_non_file(template: dict[str, Any], place: str, kind: str) -> None:
    live, project, data, sid = template["live"], template["project"], template["data"], template["sid"]
    shutil.rmtree(live)
    shutil.copytree(template["saved"], live, symlinks=True)
    target = template["places"][place]
    server = _plant(target, kind)
    before = _state(target)
    commands = [["sessions", "list", "--all"], ["sessions", "show", sid], ["sessions", "context", sid],
                ["sessions", "tree", sid], ["checkpoints", "list", sid],
                ["rewind", sid, "--to", "2", "--mode", "both", "--yes"],
                ["-p", "hello"], ["-c", "-p", "hello"], ["-r", sid, "-p", "hello"]]
    try:
        for args in commands:
            _check(_run(args, project, data), args)
            after = _state(target)
            if kind == "zero_link" and stat.S_ISREG(after[0]):
                continue  # our atomic writes replace a symlink itself (never write through it)
            assert after == before, f"{args} changed the planted {kind} at {place}"
    finally:
        if server is not None:
            server.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_non_file_in_place_of_a_real_cli_file_history_blob(tmp_path: Path, kind: str) -> None:
    """The real CLI's backups are raw blobs `<data>/file-history/<sid>/<sha256>`: a checkpoint
    listing and a code rewind read them."""
    from commandcode.config.slug import project_slug
    from helpers.checkpoints import SAMPLE_CWD, SAMPLE_SESSION, SAMPLES

    project, data = tmp_path / "proj", tmp_path / "data"
    project.mkdir()
    folder = data / "projects" / project_slug(str(project))
    folder.mkdir(parents=True)
    for source in (SAMPLES / "projects" / "home-dev-proj").glob(f"{SAMPLE_SESSION}*"):
        (folder / source.name).write_text(source.read_text().replace(SAMPLE_CWD, str(project)))
    shutil.copytree(SAMPLES / "file-history" / SAMPLE_SESSION, data / "file-history" / SAMPLE_SESSION)
    (project / "existing.txt").write_bytes(b"version two\n")
    (project / "newfile.txt").write_bytes(b"version one\n")
    [blob] = list((data / "file-history" / SAMPLE_SESSION).iterdir())
    server = _plant(blob, kind)
    before = _state(blob)
    try:
        for args in (["checkpoints", "list", SAMPLE_SESSION], ["rewind", SAMPLE_SESSION, "--to", "3", "--mode", "code", "--yes"],
                     ["rewind", SAMPLE_SESSION, "--to", "3", "--mode", "both", "--yes", "--dry-run"]):
            _check(_run(args, project, data), args)
            assert _state(blob) == before, f"{args} changed the planted {kind}"
        assert (project / "existing.txt").read_bytes() == b"version two\n", "no restore from a non-file"
    finally:
        if server is not None:
            server.close()
