"""Relinking a session whose working directory is gone: its transcript and sidecars move to the
project folder of a new directory. The header is not rewritten (the real CLI reads the session
where it now is; `cwd` stays the historical one).

The move is crash-safe: every file is first hard-linked into the new folder (sidecars first, the
transcript last), the folder is fsynced, then the old names are removed (the transcript first).
A crash leaves the session complete in the old folder, or in both (the same inodes), or complete
in the new one; running the relink again finishes it. It refuses when a name is taken in the new
folder, or another process is writing the session; a session already filed there is left as it is.
"""

from __future__ import annotations

import os

from ..config.paths import sessions_folder
from ..errors import CommandcodeError
from ..storage.durable import ensure_dir, fsync_dir
from .files import SessionFiles
from .format import read_header_cwd
from .lock import WriterLock

SIDECARS = (".meta.json", ".checkpoints.jsonl", ".share.json", ".prompts.jsonl", ".scheduled-tasks.json", ".v2.bak")


def relink(files: SessionFiles, cwd: str) -> SessionFiles:
    """Moves the session to `cwd`'s project folder; returns its files there.

    Raises:
        CommandcodeError: another file of that name is already in the new folder.
        SessionLockedError: another process is writing the session.
        OSError: a file could not be linked or removed (what was linked is removed again).
    """
    target = SessionFiles(sessions_folder(cwd), files.session_id)
    if os.path.realpath(target.folder) == os.path.realpath(files.folder):
        _finish_interrupted(files)  # already here: at most the old names of a crashed relink are left
        return files
    with WriterLock(files.transcript):
        suffixes = [suffix for suffix in SIDECARS if os.path.lexists(files.sidecar_path(suffix))]
        ensure_dir(target.folder)
        linked: list[str] = []
        try:
            for suffix in [*suffixes, ".jsonl"]:
                source, destination = files.sidecar_path(suffix), target.sidecar_path(suffix)
                if os.path.lexists(destination):
                    if os.path.exists(source) and os.path.samefile(source, destination):
                        continue  # an interrupted relink got this far
                    raise CommandcodeError(f"{destination} already exists; not relinking over it",
                                           hint="move that file away first")
                os.link(source, destination, follow_symlinks=False)
                linked.append(destination)
            fsync_dir(target.folder)
        except BaseException:
            for path in linked:
                os.unlink(path)
            raise
        for suffix in [".jsonl", *suffixes]:
            try:
                os.unlink(files.sidecar_path(suffix))
            except FileNotFoundError:
                pass
        fsync_dir(files.folder)
    return target


def _finish_interrupted(files: SessionFiles) -> bool:
    """Completes a relink a crash interrupted after linking `files` into their new folder: the old
    names (in the header cwd's project folder) that are still the same files are removed. True
    when there were any."""
    recorded = read_header_cwd(files.sidecar_path(".jsonl"))
    if not recorded or not os.path.isabs(recorded):
        return False
    old = SessionFiles(sessions_folder(recorded), files.session_id)
    if os.path.realpath(old.folder) == os.path.realpath(files.folder):
        return False
    stale = []
    for suffix in (".jsonl", *SIDECARS):
        source, kept = old.sidecar_path(suffix), files.sidecar_path(suffix)
        try:
            if os.path.samefile(source, kept):
                stale.append(source)
        except OSError:
            continue
    if not stale:
        return False
    with WriterLock(files.transcript):
        for path in stale:
            os.unlink(path)
        fsync_dir(old.folder)
    return True
