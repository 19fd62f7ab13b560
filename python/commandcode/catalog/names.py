"""The names of this directory's sessions, for the fork, clone and rename name checks.

A name check needs only each session's name (its latest `session_info` entry, else `meta.title`)
and whose it is (the header's `cwd`), not a listing row. `project_names(cwd)` takes them from the
catalog's rows where those are fresh (a data dir with no catalog yet gets none made here), and reads the others from the transcripts' ends
(`_native.names_of_files`: the header line and a byte search backwards for the last
`session_info`), so a fork of a 1 GB session does not make the next name check scan the whole new
copy. A transcript whose name that search cannot decide (a legacy or headerless file, one that
cannot be read) is summarized whole (`native_summary`), as a listing would. Nothing is written:
the next listing brings the rows up to date.
"""

from __future__ import annotations

import os
import sqlite3

from ..config.env import catalog_enabled
from ..config.paths import catalog_file, is_transcript_name
from .db import from_db, to_db
from .listing import Scope, belongs_here

Named = tuple[str, str | None]  # session id, name


def project_names(cwd: str | os.PathLike[str]) -> list[Named]:
    """(id, name) of every session started in `cwd` (headless ones included), as `list_sessions`
    would give them (see the module docstring)."""
    scope = Scope(cwd)
    problems: list[str] = []
    found: list[tuple[str, str, str | None, str | None]] = []  # path, folder, header cwd, name
    stale: list[tuple[str, str]] | None = None
    if catalog_enabled() and os.path.exists(catalog_file()):  # none yet: creating one is a listing's work
        stale = _from_catalog(scope, found, problems)
    if stale is None:
        found.clear()
        stale = [(os.path.join(folder, name), folder) for folder in scope.folders for name in _names(folder)]
    found += _from_files(stale)
    directories = scope.directories or [scope.cwd]
    named: list[Named] = []
    for path, folder, header_cwd, name in found:
        here = os.getcwd() if header_cwd is None else header_cwd
        if any(belongs_here(here, folder, directory) for directory in directories):
            named.append((os.path.basename(path)[: -len(".jsonl")], name))
    return named


def _names(folder: str) -> list[str]:
    try:
        return [name for name in os.listdir(folder)
                if is_transcript_name(name) and os.path.isfile(os.path.join(folder, name))]
    except OSError:
        return []


def _from_catalog(scope: Scope, found: list[tuple[str, str, str | None, str | None]],
                  problems: list[str]) -> list[tuple[str, str]] | None:
    """Appends the fresh rows' names to `found`; returns the transcripts whose rows are missing or
    stale (None: the catalog cannot be used)."""
    from .cached import catalog_session
    from .freshness import changed_files
    from .index import pending

    with catalog_session(problems) as catalog:
        if catalog is None:
            return None
        connection = catalog.connection
        stale: list[tuple[str, str]] = []
        try:
            for folder in scope.folders:
                state = changed_files(connection, folder, problems)
                if state is None:
                    continue
                changed = {item.path for item in pending(connection, state)}
                skip = changed | set(state.gone)
                for path, header_cwd, name, damaged in connection.execute(
                        "SELECT path, cwd, name, damaged FROM sessions WHERE folder = ?", (to_db(folder),)):
                    path = str(from_db(path))
                    if path not in skip and not (damaged is not None and header_cwd == ""):
                        found.append((path, folder, None if header_cwd is None else str(from_db(header_cwd)),
                                      None if name is None else str(from_db(name))))
                stale += [(path, folder) for path in sorted(changed)]
        except sqlite3.Error:
            return None
        return stale


def _from_files(stale: list[tuple[str, str]]) -> list[tuple[str, str, str | None, str | None]]:
    """Names read from the transcripts' ends (a whole summary where that cannot decide)."""
    if not stale:
        return []
    from .native_summary import names_of_files, summarize_paths

    out: list[tuple[str, str, str | None, str | None]] = []
    undecided: list[tuple[str, str]] = []
    for (path, folder), result in zip(stale, names_of_files([path for path, _ in stale])):
        if isinstance(result, BaseException) or result[1] is False:
            undecided.append((path, folder))
            continue
        header_cwd, name = result
        out.append((path, folder, header_cwd, name or _title(path)))
    for (path, folder), (summary, _) in zip(undecided, summarize_paths([path for path, _ in undecided])
                                            if undecided else []):
        if summary.damaged is None or summary.cwd:
            out.append((path, folder, summary.cwd if summary.cwd_recorded else None, summary.name))
    return out


def _title(path: str) -> str | None:
    """`meta.title` (trimmed) of a transcript's session, when it has a meta sidecar."""
    meta_path = path[: -len(".jsonl")] + ".meta.json"
    if not os.path.exists(meta_path):
        return None
    from pathlib import Path

    from ..sessions.facts import display_name
    from ..sessions.meta import read_meta

    return display_name(None, read_meta(Path(meta_path)))
