"""Renaming and deleting a session that is not open here (the picker's rename and delete).

`rename_session` gives a session a name no other session of its project has (compared trimmed
and case-insensitively, the real CLI's `/rename` rule) and that reads as no other session's id (`naming.py`): a `session_info` entry, committed under
the writer lock, then `meta.title` and `meta.userRenamed`, as `-n` writes them.

`delete_session` removes a session as the real picker does (ref §9): the transcript, its
sidecars and `file-history/<id>`, plus our index sidecar, the folder of its sub-agent runs and the
session's scratch folder; through
the `trash` command when one is installed (the files stay recoverable), else removed. It refuses
the current session and one another process is writing. The caller asks the user first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..errors import CommandcodeError, SessionLockedError, UsageError
from ..sessions.files import SessionFiles
from ..sessions.format import clean_name, read_header_cwd
from ..sessions.lock import lock_holder
from ..sessions.meta import read_meta_for_update, update_meta
from ..sessions.reader import index_path_for
from ..sessions.writer import SessionWriter

DELETED_SIDECARS = (".jsonl", ".meta.json", ".share.json", ".checkpoints.jsonl", ".prompts.jsonl", ".shell-baseline.json",
                    ".shell-pending.json", ".scheduled-tasks.json", ".v2.bak")
TRASH_TIMEOUT_S = 60


def rename_session(files: SessionFiles, name: str, cwd: Path) -> str:
    """Names the session `name` (cleaned); returns the name written.

    Raises:
        UsageError: the name is empty.
        CommandcodeError: another session of the project has that name.
        SessionLockedError: another process is writing the session.
        InvalidSessionError: its meta file is not a JSON object (nothing written).
    """
    from .resume import find_by_name

    cleaned = clean_name(name)
    if not cleaned:
        raise UsageError("the name is empty", hint="type a name")
    taken = [other for other in find_by_name(cleaned, cwd)
             if other.session_id != files.session_id and os.path.samefile(other.folder, files.folder)]
    if taken:
        raise CommandcodeError(f"session {taken[0].session_id} is already named {cleaned!r}",
                               hint="names are unique within a project; pick another")
    from .naming import refuse_id_like

    refuse_id_like(cleaned, cwd, session_id=files.session_id)
    read_meta_for_update(files.meta)  # refuse a meta we could not update before writing anything
    with SessionWriter(files, os.fspath(cwd)) as writer:
        writer.append_entry("session_info", {"name": cleaned})
        writer.commit()
    update_meta(files.meta, {"title": cleaned, "userRenamed": True})
    return cleaned


def session_paths(files: SessionFiles) -> list[str]:
    """Every file and folder that belongs to the session and exists."""
    paths = [files.sidecar_path(suffix) for suffix in DELETED_SIDECARS]
    paths += [os.fspath(files.file_history), index_path_for(files)]
    own = os.path.join(files.folder, files.session_id)  # `<id>/subagents/`: its sub-agent runs (format §21)
    if os.path.isdir(own) and not os.path.islink(own):
        paths.append(own)
    cwd = read_header_cwd(files.transcript)
    from ..workspace.scratchpad import scratchpad_path

    scratch = scratchpad_path(files.session_id, cwd) if cwd else None
    if scratch is not None:
        paths.append(os.path.dirname(scratch))  # the session's folder: `<id>/scratchpad`
    return [path for path in paths if os.path.lexists(path)]


def delete_session(files: SessionFiles, *, current_id: str | None = None) -> tuple[list[str], bool]:
    """Deletes the session; returns the paths removed and whether they went to the trash.

    Raises:
        CommandcodeError: it is the current session, or the `trash` command failed (nothing removed).
        SessionLockedError: another process is writing it.
    """
    if files.session_id == current_id:
        raise CommandcodeError("the current session cannot be deleted", hint="switch to another session first")
    holder = lock_holder(files.transcript)
    if holder is not None:
        raise SessionLockedError(f"session {files.session_id} is open for writing by process {holder}",
                                 holder_pid=holder, hint="close it there first")
    paths = session_paths(files)
    trash = shutil.which("trash")
    if trash is not None and paths:
        completed = subprocess.run([trash, "--", *paths], capture_output=True, text=True, timeout=TRASH_TIMEOUT_S,
                                   stdin=subprocess.DEVNULL)
        if completed.returncode != 0:
            reason = (completed.stderr.strip().splitlines() or [f"exit {completed.returncode}"])[-1]
            raise CommandcodeError(f"trash could not take session {files.session_id}: {reason}")
        return paths, True
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    return paths, False
