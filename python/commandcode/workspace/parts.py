"""Every file that belongs to one session, as a sweep, an archive and the footprint count them.

The transcript and every `<sid>.<kind>` file beside it (meta, checkpoints, share, the legacy
backups `.v2.bak[.<n>]`, the `.prompts.jsonl` / `.scheduled-tasks.json` the real CLI lists for
deletion, and any sidecar a later release adds), the sub-agent runs stored beside it
(`<sid>/subagents/agent-<id>.jsonl` and `.meta.json`, format §21), the real CLI's
`file-history/<sid>/` blobs and `sessions/hooks-audit-<sid>.jsonl`.
The index sidecar is apart (`index_part`): a cache, deleted with the session, never archived.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config.paths import data_dir
from ..sessions.files import SessionFiles
from ..sessions.reader import index_path_for
from ..sessions.subagent_runs import PREFIX, subagents_dir


def _regular(path: Path) -> bool:
    try:
        return path.is_file() and not path.is_symlink()
    except OSError:
        return False


def sidecar_parts(files: SessionFiles) -> list[Path]:
    """The session's files other than the transcript and the index, that exist: every
    `<sid>.<anything>` beside the transcript (the known sidecars and any a later release adds),
    its `file-history/` blobs and its hook audit log."""
    try:
        names = sorted(os.listdir(files.folder))
    except OSError:
        names = []
    found = [Path(files.folder, name) for name in names if name.startswith(f"{files.session_id}.")
             and name != f"{files.session_id}.jsonl"]
    runs = Path(subagents_dir(files))
    if runs.is_dir() and not runs.is_symlink():
        found += sorted(path for path in runs.iterdir() if path.name.startswith(PREFIX) and _regular(path))
    history = files.file_history
    if history.is_dir() and not history.is_symlink():
        found += sorted(path for path in history.iterdir() if _regular(path))
    found.append(data_dir() / "sessions" / f"hooks-audit-{files.session_id}.jsonl")
    return [path for path in found if _regular(path)]


def session_parts(files: SessionFiles) -> list[Path]:
    """Every archivable file of the session, the transcript first."""
    transcript = files.transcript
    return ([transcript] if _regular(transcript) else []) + sidecar_parts(files)


def index_part(files: SessionFiles) -> Path:
    """The session's index sidecar (it may not exist)."""
    return Path(index_path_for(files))


def size_of(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        try:
            total += os.lstat(path).st_size
        except OSError:
            continue
    return total
