"""The session the rewind crash tests kill restores of (`tests/crash/test_rewind_crash.py`,
`tests/crash/test_redo_point_crash.py`): a turn that edits, deletes and re-modes 120 files and
creates 10, backed up as our own objects."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import commandcode
from commandcode.checkpoints.manager import CheckpointManager
from helpers.checkpoints import new_session_files, snapshot, write

FILES = 120

REWIND_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from commandcode.sessions.files import SessionFiles
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.rewind import RewindOptions, rewind
    directory, session_id, project, fault, value = sys.argv[1:6]
    files = SessionFiles(Path(directory), session_id)
    print("ready", flush=True)
    rewind(files, Path(project), 1, RewindMode.CODE, RewindOptions(faults={fault: int(value)}))
    print("done", flush=True)
    """
)
"""A code rewind to checkpoint 1 in a child process: `python -c REWIND_SCRIPT DIRECTORY SESSION
PROJECT FAULT VALUE` (a native-restore test hook, e.g. `step_delay_ms 20`); prints `ready` first."""


def prepare(project: Path) -> tuple[object, dict, dict]:
    for index in range(FILES):
        write(project / f"pkg{index % 7}/file{index}.txt", f"original {index}\n" * (index % 5 + 1), 0o644)
    before_turn = snapshot(project)
    files = new_session_files(project)
    manager = CheckpointManager.for_session(files, project, compatible_backups=False)  # sources: our objects
    manager.open_checkpoint("change everything", 0, None)
    for index in range(FILES):
        path = project / f"pkg{index % 7}/file{index}.txt"
        manager.backup_before_edit(str(path))
        if index % 4 == 0:
            path.unlink()
        else:
            write(path, f"edited {index}\n", 0o600 if index % 3 else 0o755)
        manager.record_after_edit(str(path))
    for index in range(10):
        path = project / f"new/created{index}.txt"
        manager.backup_before_edit(str(path))
        write(path, f"created {index}")
        manager.record_after_edit(str(path))
    manager.flush()
    return files, before_turn, snapshot(project)


def child_environment(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a child `REWIND_SCRIPT` (or CLI): the same commandcode (installed, or
    the source tree with its built module) and the data dir `home`."""
    package_root = str(Path(commandcode.__file__).resolve().parents[1])
    python_path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH", "")]))
    return {**os.environ, "PYTHONPATH": python_path, "COMMANDCODE_HOME": str(home), **extra}
