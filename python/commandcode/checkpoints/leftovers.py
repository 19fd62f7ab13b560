"""At a session's open for a turn, and before a rewind or redo writes: the temp files a killed
process of the session left behind.

Owns `remove_leftovers` (`CheckpointManager.for_session` calls it) and `LeftoverSweep` (`rewind.py`
starts one and finishes it before its first write): the session's own files in its folder
(`<sid>.*` written by `atomic_write`, the transcript's hidden temp), its sub-agent runs'
(`<sid>/subagents/agent-*`), and, in the project, the edit tools' temps beside the files the
newest checkpoint backed up (every tool write is backed up first, so a write killed mid-way is
beside one of them). What is removed, and what never is: `storage/stale_temps.py`.

All the folders (a rewind of 1,000 files reads some 700 in the project, and the session's folder
in the data dir holds every session of the project) are listed natively in one call
(`store.names_like`: only the names ending `.tmp` come back), on a thread of its own while the
caller plans: the listing releases the GIL, so it overlaps with Python work.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from ..sessions.files import SessionFiles
from ..sessions.subagent_runs import subagents_dir
from ..storage.stale_temps import remove_named
from . import store as backups
from .records import Checkpoint, FileBackup

REPLACE_NAME_CHARS = 200  # `replace_file` names its temp after this much of the target's name


def remove_leftovers(files: SessionFiles, records: list[Checkpoint], cwd: Path) -> None:
    """Removes the stale temp files of the session (see the module docs); never raises."""
    LeftoverSweep(files, records, cwd, background=False).finish()


class LeftoverSweep:
    """One removal of the session's stale temp files (see the module docs), begun when made:
    its folders (the session's two in the data dir, then the project's) listed on a thread when
    `background`, else at once. `finish` waits for the listing and removes what the rule
    accepts; it never raises and may be called again (it does nothing then)."""

    def __init__(self, files: SessionFiles, records: list[Checkpoint], cwd: Path, *, background: bool = True) -> None:
        prefix = files.session_id + "."
        self._rules: list[tuple[str, Callable[[str], bool], bool]] = [  # (folder, owns, project)
            (os.fspath(files.directory), lambda target: target.startswith(prefix), False),
            (os.fspath(subagents_dir(files)), lambda target: target.startswith("agent-"), False),
            *((folder, names.__contains__, True) for folder, names in _owned_names(records, cwd).items())]
        self._found: list[tuple[int, str]] = []
        self._thread: threading.Thread | None = None
        if background:
            thread = threading.Thread(target=self._list, name="commandcode-leftovers", daemon=True)
            try:
                thread.start()
                self._thread = thread
            except RuntimeError:  # no thread to be had (a process at its limit): listed here instead
                self._list()
        else:
            self._list()

    def _list(self) -> None:
        folders = [folder for folder, _, _ in self._rules]
        try:
            self._found = backups.names_like(folders, "", ".tmp")  # every pattern of ours ends so
        except (OSError, ValueError):  # a folder name the file system cannot encode: listed one by one
            self._found = []
            for index, folder in enumerate(folders):
                try:
                    self._found.extend((index, name) for name in os.listdir(folder) if name.endswith(".tmp"))
                except (OSError, ValueError):
                    continue

    def finish(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        found, self._found = self._found, []
        for index, name in found:
            folder, owns, project = self._rules[index]
            remove_named(folder, (name,), owns, project=project)


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
        cut = key.rfind("/")  # `os.path.split` of an absolute, normalised key, at a third of its cost
        folder, name = key[:cut] or "/", key[cut + 1:]
        folders.setdefault(folder, set()).add(name[:REPLACE_NAME_CHARS])
    return folders
