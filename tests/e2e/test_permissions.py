"""Everything commandcode creates in its data dir is private, whatever the umask: transcripts,
meta, checkpoints, history, writer locks, store objects and their fan-out folders, restore
journals, index sidecars (when the index is on), and every folder on the way (0700 folders,
0600 files, 0400 objects): never readable by group or others."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import crash_harness as harness
from helpers.cli import cli_env, run_cli


def _exercise(data: Path, cwd: Path, index: bool) -> None:
    extra = {"COMMANDCODE_INDEX": "on"} if index else {}

    def ok(args: list[str]) -> str:
        completed = run_cli(args, cwd, data, **extra)
        assert completed.returncode == 0, completed.stderr
        return completed.stdout

    (cwd / "a.txt").write_text("version one\n")
    first = json.loads(ok(["-p", 'call write_file {"file_path": "b.txt", "content": "new\\n"}', "-n", "perm test",
                           "--output-format", "json"]))
    session = first["session_id"]
    ok(["-p", 'call edit_file {"file_path": "a.txt", "old_string": "one", "new_string": "two"}', "-r", session])
    ok(["sessions", "list", "--all"])
    ok(["rewind", session, "--to", "2", "--mode", "code", "--yes"])
    ok(["rewind", session, "--to", "1", "--mode", "both", "--yes"])
    # The prompt history is the interactive shell's to write (-p never does): record one as it does.
    subprocess.run([sys.executable, "-c", "from commandcode.sessions.history import record_prompt; record_prompt('x')"],
                   cwd=cwd, env=cli_env(data, **extra), check=True, timeout=60)
    assert (cwd / "a.txt").read_text() == "version one\n"


def _exposed(data: Path) -> list[str]:
    exposed = []
    for folder, folders, names in os.walk(data):
        for name in [*folders, *names, ""] if folder == str(data) else [*folders, *names]:
            path = Path(folder, name) if name else Path(folder)
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                exposed.append(f"{path} is a symlink")
            elif mode & 0o077:
                exposed.append(f"{path.relative_to(data.parent)} is {stat.filemode(mode)}")
    return exposed


@pytest.mark.parametrize("index", [False, pytest.param(True, marks=pytest.mark.skipif(
    not harness.index_supported(), reason="_native.scan_session takes no index path yet (index sidecars)"))])
def test_nothing_commandcode_creates_is_readable_by_others(home: Path, workdir: Path, umask_022: None,
                                                          index: bool) -> None:
    _exercise(home, workdir, index)
    kinds = {path.relative_to(home).parts[0] for path in home.rglob("*")}
    expected = {"projects", "objects", "locks", "history.jsonl", "journals"} | ({"index"} if index else set())
    assert expected <= kinds, kinds  # every kind of file was made
    objects = [path for path in (home / "objects").rglob("*") if path.is_file() and len(path.name) == 62]
    assert objects, "the edit must have stored a backup object"
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o400 for path in objects)
    assert _exposed(home) == []


def test_existing_loose_folders_are_left_alone_but_new_files_are_private(home: Path, workdir: Path,
                                                                        umask_022: None) -> None:
    """A data dir made by the real CLI (0755 folders) keeps its modes; what we add is still 0600."""
    (home / "projects").mkdir(parents=True)
    os.chmod(home, 0o755)
    os.chmod(home / "projects", 0o755)
    _exercise(home, workdir, False)
    assert stat.S_IMODE(home.stat().st_mode) == 0o755
    files = [path for path in home.rglob("*") if path.is_file()]
    assert files and all(path.stat().st_mode & 0o077 == 0 for path in files), [
        (str(path), oct(path.stat().st_mode)) for path in files if path.stat().st_mode & 0o077]
    env = cli_env(home)
    assert env["COMMANDCODE_HOME"] == str(home)
