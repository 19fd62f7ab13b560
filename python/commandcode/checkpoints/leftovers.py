"""At a session's open for a turn, and before a rewind or redo writes: the temp files a killed
process of the session left behind.

Owns `remove_leftovers` (`CheckpointManager.for_session` calls it) and `LeftoverSweep` (`rewind.py`
starts one and finishes it before its first write): the session's own files in its folder
(`<sid>.*` written by `atomic_write`, the transcript's hidden temp), its sub-agent runs'
(`<sid>/subagents/agent-*`), and, in the project, the edit tools' temps beside the files the
newest checkpoint backed up (every tool write is backed up first, so a write killed mid-way is
beside one of them). What is removed, and what never is: `storage/stale_temps.py`.

The project's folders (a rewind of 1,000 files reads some 700) are listed natively in one call
(`store.names_like`: only the names shaped like an edit tool's temp come back), on a thread of
its own while the caller plans: the listing releases the GIL, so it overlaps with Python work.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

from ..sessions.files import SessionFiles
from ..sessions.subagent_runs import subagents_dir
from ..storage.stale_temps import remove_named, remove_stale
from . import store as backups
from .records import Checkpoint, FileBackup

REPLACE_NAME_CHARS = 200  # `replace_file` names its temp after this much of the target's name


def remove_leftovers(files: SessionFiles, records: list[Checkpoint], cwd: Path) -> None:
    """Removes the stale temp files of the session (see the module docs); never raises."""
    LeftoverSweep(files, records, cwd, background=False).finish()


class LeftoverSweep:
    """One removal of the session's stale temp files (see the module docs), begun when made:
    the session's folders at once, the project's folders listed on a thread when `background`.
    `finish` waits for the listing and removes what it found; it never raises and may be called
    again (it does nothing then)."""

    def __init__(self, files: SessionFiles, records: list[Checkpoint], cwd: Path, *, background: bool = True) -> None:
        prefix = files.session_id + "."
        remove_stale(files.directory, lambda target: target.startswith(prefix))
        remove_stale(subagents_dir(files), lambda target: target.startswith("agent-"))
        self._names = _owned_names(records, cwd)
        self._folders = list(self._names)
        self._found: list[tuple[int, str]] = []
        self._thread: threading.Thread | None = None
        if background and self._folders:
            thread = threading.Thread(target=self._list, name="commandcode-leftovers", daemon=True)
            try:
                thread.start()
                self._thread = thread
            except RuntimeError:  # no thread to be had (a process at its limit): listed here instead
                self._list()
        else:
            self._list()

    def _list(self) -> None:
        try:
            self._found = backups.names_like(self._folders, ".", ".tmp")  # `replace_file`'s temps
        except (OSError, ValueError):  # a folder name the file system cannot encode: listed one by one
            self._found = []
            for index, folder in enumerate(self._folders):
                try:
                    self._found.extend((index, name) for name in os.listdir(folder)
                                       if name.startswith(".") and name.endswith(".tmp"))
                except (OSError, ValueError):
                    continue

    def finish(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        found, self._found = self._found, []
        for index, name in found:
            folder = self._folders[index]
            remove_named(folder, (name,), self._names[folder].__contains__, project=True)


def _owned_names(records: list[Checkpoint], cwd: Path) -> dict[str, set[str]]:
    """By folder, the names (cut as `replace_file` cuts them) of the files the newest turn's
    checkpoint backed up with an edit tool: the only temps in a project that are ours to judge."""
    newest = next((record for record in reversed(records) if not record.is_redo_point), None)
    folders: dict[str, set[str]] = {}
    if newest is None:
        return folders
    by_path = newest.items_by_path(cwd)  # resolved once for this and the rewind's plan
    items: Iterable[tuple[str, FileBackup]]
    if len(by_path) == len(newest.files):
        items = by_path.items()
    else:  # a path named twice: each of its items counts
        base = os.fspath(cwd)
        items = ((os.path.normpath(os.path.join(base, item.path)), item) for item in newest.files)  # `resolve_path`
    for key, item in items:
        if item.extra.get("source") == "shell":
            continue  # a command's own files: its temps are not ours to judge
        folder, name = os.path.split(key)
        folders.setdefault(folder, set()).add(name[:REPLACE_NAME_CHARS])
    return folders
