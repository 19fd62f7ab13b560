"""Sidecars without a transcript: what a `--no-session` run of the real CLI leaves (a meta and
a checkpoints file), or a fork killed before its transcript was linked into place (format §4.8).

They are no sessions (nothing to resume), so listings leave them out; `sessions list --all`
shows them, marked, because their checkpoints can still be rewound (`commandcode rewind
<path of the .checkpoints.jsonl>`). Each is a row of the listing's JSON fields with
`message_count` 0, `path` its checkpoints file (else its meta file), the meta's name, branch,
entrypoint and parent, its files' times and total size, plus `leftover: true` and
`checkpoint_count`. Nothing is ever modified.
"""

from __future__ import annotations

import os

from ..sessions.meta import read_meta
from ..storage.ids import iso_from_ms
from .summary import FIELDS

CHECKPOINTS = ".checkpoints.jsonl"
META = ".meta.json"
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def leftover_rows(folders: list[str]) -> list[dict[str, Any]]:
    """The leftovers in `folders`, as listing rows (unordered)."""
    rows = []
    for folder in folders:
        try:
            names = set(os.listdir(folder))
        except OSError:
            continue  # the listing itself reports a folder it cannot read
        ids = {name[: -len(suffix)] for name in names for suffix in (CHECKPOINTS, META)
               if name.endswith(suffix) and not name.startswith(".")}
        for session_id in sorted(ids):
            if f"{session_id}.jsonl" not in names and session_id:
                row = _row(folder, session_id, names)
                if row is not None:
                    rows.append(row)
    return rows


def _row(folder: str, session_id: str, names: set[str]) -> dict[str, Any] | None:
    from pathlib import Path

    paths = [os.path.join(folder, session_id + suffix) for suffix in (CHECKPOINTS, META)
             if session_id + suffix in names]
    stats = []
    for path in paths:
        try:
            stats.append(os.stat(path))
        except OSError:
            continue
    if not stats:
        return None
    checkpoints = os.path.join(folder, session_id + CHECKPOINTS)
    count = 0
    if session_id + CHECKPOINTS in names:
        try:
            with open(checkpoints, "rb") as handle:
                count = sum(1 for line in handle if line.strip())
        except OSError:
            count = 0
    meta = read_meta(Path(os.path.join(folder, session_id + META))) if session_id + META in names else {}

    def text(key: str) -> str | None:
        value = meta.get(key)
        return value.strip() if isinstance(value, str) and value.strip() else None

    row: dict[str, Any] = dict.fromkeys(FIELDS)
    row.update(id=session_id, name=text("title") or text("name"),
               created=iso_from_ms(int(min(stat.st_mtime for stat in stats) * 1000)),
               modified=iso_from_ms(int(max(stat.st_mtime for stat in stats) * 1000)), message_count=0,
               git_branch=text("gitBranch"), entrypoint=text("entrypoint"), parent_session_id=text("parentSessionId"),
               path=paths[0], cwd="", skipped_lines=0, size=sum(stat.st_size for stat in stats), leftover=True,
               checkpoint_count=count)
    return row
