"""A write killed mid-way leaves no temp file behind (issue 28): the next open of the session
(`CheckpointManager.for_session`) removes the temp files of ours a dead process left, and only
those: the name pattern of our writes, for a target the session owns (its files, a file an edit
tool backed up), and a pid that names no running process. A user's look-alike files stay."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from commandcode.checkpoints.manager import CheckpointManager
from commandcode.sessions.subagent_runs import subagents_dir
from helpers.checkpoints import new_session_files, write


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_the_next_open_removes_the_temps_a_killed_write_left_and_nothing_else(home: Path, project: Path) -> None:
    """On 55fdfa8 every one of them stayed (an edit tool's temp in the project forever)."""
    files = new_session_files(project)
    manager = CheckpointManager.for_session(files, project, compatible_backups=False)
    manager.open_checkpoint("the killed turn", 0, None)
    write(project / "src" / "x.txt", "before\n")
    manager.backup_before_edit(str(project / "src" / "x.txt"))
    manager.backup_before_edit(str(project / "new.txt"))
    manager.close()
    dead, alive, sid = _dead_pid(), os.getpid(), files.session_id
    runs = Path(subagents_dir(files))
    stale = [project / "src" / f".x.txt.{dead}.0badcafe.tmp", project / f".new.txt.{dead}.12345678.tmp",
             files.directory / f"{sid}.checkpoints.jsonl.{dead}.tmp", files.directory / f".{sid}.jsonl.{dead}.tmp",
             runs / f"agent-bg-1-0badcafe.meta.json.{dead}.tmp", runs / f".agent-bg-1-0badcafe.jsonl.{dead}.tmp"]
    kept = [project / "src" / f".x.txt.{alive}.0badcafe.tmp",  # a write still under way
            project / "src" / f".y.txt.{dead}.0badcafe.tmp",  # beside no file the session backed up
            project / "src" / f"x.txt.{dead}.tmp",  # not the edit tools' pattern: may be the user's
            project / "src" / f".x.txt.{dead}.notahex.tmp",
            files.directory / f"other-session.meta.json.{dead}.tmp",  # another session's
            files.directory / f"{sid}.meta.json.{alive}.tmp"]
    for path in [*stale, *kept]:
        write(path, "partial")
    link = project / "src" / f".x.txt.{dead}.feedf00d.tmp"
    link.symlink_to(project / "src" / "x.txt")  # not a regular file: left alone
    CheckpointManager.for_session(files, project, compatible_backups=False).close()
    assert [path.name for path in stale if os.path.lexists(path)] == []
    assert [path.name for path in kept if not path.exists()] == []
    assert link.is_symlink() and (project / "src" / "x.txt").read_text() == "before\n"


def test_a_rewind_removes_them_in_every_folder_it_backed_up_even_one_named_in_no_encoding(home: Path,
                                                                                          project: Path) -> None:
    """A rewind lists the folders of the files the newest turn backed up natively, in one call on
    a thread of its own (`LeftoverSweep`), and removes what it found before it restores anything:
    the same temps as a turn's open, in 300 folders, one of them named with a byte that is no
    UTF-8 (a `str` with a surrogate escape on the Python side)."""
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.rewind import rewind

    odd = project / os.fsdecode(b"caf\xe9")
    folders = [project / f"d{number:03}" for number in range(299)] + [odd]
    manager = CheckpointManager.for_session(new_session_files(project), project, compatible_backups=False)
    files = manager.files
    manager.open_checkpoint("the killed turn", 0, None)
    for folder in folders:
        write(folder / "x.txt", "before\n")
        manager.backup_before_edit(str(folder / "x.txt"))
        write(folder / "x.txt", "after\n")
        manager.record_after_edit(str(folder / "x.txt"))
    manager.close()
    dead, alive = _dead_pid(), os.getpid()
    stale = [folder / f".x.txt.{dead}.0badcafe.tmp" for folder in folders]
    kept = [folder / f".x.txt.{alive}.0badcafe.tmp" for folder in folders[::50]] + \
        [folder / f".y.txt.{dead}.0badcafe.tmp" for folder in folders[::50]] + [odd / f"x.txt.{dead}.tmp"]
    for path in [*stale, *kept]:
        write(path, "partial")
    result = rewind(files, project, 1, RewindMode.CODE)
    assert len(result.written) == len(folders) and (odd / "x.txt").read_text() == "before\n"
    assert [path.name for path in stale if os.path.lexists(path)] == []
    assert [path.name for path in kept if not path.exists()] == []
