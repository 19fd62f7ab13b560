"""At a session's open for a turn, and before a rewind or redo writes: the temp files a killed
process of the session left behind.

Owns `remove_leftovers` (`CheckpointManager.for_session` and `rewind.py` call it): the session's own files in
its folder (`<sid>.*` written by `atomic_write`, the transcript's hidden temp), its sub-agent runs'
(`<sid>/subagents/agent-*`), and, in the project, the edit tools' temps beside the files the
newest checkpoint backed up (every tool write is backed up first, so a write killed mid-way is
beside one of them). What is removed, and what never is: `storage/stale_temps.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..sessions.files import SessionFiles
from ..sessions.subagent_runs import subagents_dir
from ..storage.stale_temps import remove_stale
from .records import Checkpoint, resolve_path

REPLACE_NAME_CHARS = 200  # `replace_file` names its temp after this much of the target's name


def remove_leftovers(files: SessionFiles, records: list[Checkpoint], cwd: Path) -> None:
    """Removes the stale temp files of the session (see the module docs); never raises."""
    prefix = files.session_id + "."
    remove_stale(files.directory, lambda target: target.startswith(prefix))
    remove_stale(subagents_dir(files), lambda target: target.startswith("agent-"))
    newest = next((record for record in reversed(records) if not record.is_redo_point), None)
    folders: dict[str, set[str]] = {}
    for item in newest.files if newest is not None else []:
        if item.extra.get("source") == "shell":
            continue  # a command's own files: its temps are not ours to judge
        folder, name = os.path.split(resolve_path(item.path, cwd))
        folders.setdefault(folder, set()).add(name[:REPLACE_NAME_CHARS])
    for folder, names in folders.items():
        remove_stale(folder, names.__contains__, project=True)
