"""Copying a session's sub-agent runs into a fork or clone being made (format §21, §4.8).

A fork copies every run; a clone the runs launched by an `agent` call on the path it keeps.
Each transcript is copied by the kernel (`copy_file_range`, a reflink where the file system
makes one) as it is at that moment, and its meta as it is: a run still being written elsewhere
arrives with what it had committed (readers skip a torn last line) and, no writer holding the
copy, reads as `interrupted`. Every file and folder made is tracked by the `NewSessionFiles` of
the copy, so a failure anywhere takes them away with the rest.
"""

from __future__ import annotations

import os

from ..storage.durable import ensure_dir, fsync_dir, open_for_write
from ..storage.regular import open_regular, read_regular
from .files import SessionFiles
from .fork import copy_range
from .lineage import NewSessionFiles
from .subagent_runs import read_run_meta, run_files, run_ids, subagents_dir


def copy_subagent_runs(source: SessionFiles, new: NewSessionFiles, *, tool_use_ids: set[str] | None = None) -> int:
    """Copies `source`'s runs (only those whose `toolUseId` is in `tool_use_ids`, when given)
    beside the new session; returns how many.

    Raises:
        OSError: a file could not be read or written (the caller's `NewSessionFiles` discards).
    """
    chosen: list[str] = []
    for agent_id in run_ids(source):
        if tool_use_ids is not None:
            try:
                meta = read_run_meta(os.fspath(run_files(source, agent_id).meta))
            except (OSError, ValueError):
                continue  # a run no call can be matched to stays with its source
            if meta.get("toolUseId") not in tool_use_ids:
                continue
        chosen.append(agent_id)
    if not chosen:
        return 0
    session_folder = os.path.join(new.files.folder, new.files.session_id)
    if not os.path.lexists(session_folder):
        new.track(session_folder, folder=True)
    target_folder = subagents_dir(new.files)
    ensure_dir(target_folder)
    for agent_id in chosen:
        old, copy = run_files(source, agent_id), run_files(new.files, agent_id)
        _copy_file(os.fspath(old.transcript), os.fspath(copy.transcript), new)
        if os.path.lexists(old.meta):
            new.write_sidecar(copy.meta, read_regular(old.meta))  # verbatim, whatever its size
    fsync_dir(target_folder)
    return len(chosen)


def _copy_file(source: str, target: str, new: NewSessionFiles) -> None:
    reader = open_regular(source)
    try:
        writer = open_for_write(target, exclusive=True)
        new.track(target)
        try:
            size = os.fstat(reader).st_size
            if size:
                copy_range(reader, writer, 0, size)
            os.fsync(writer)
        finally:
            os.close(writer)
    finally:
        os.close(reader)
