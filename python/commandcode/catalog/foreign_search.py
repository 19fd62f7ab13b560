"""Full-text search over Claude Code's and pi's sessions (`sessions search --source`, the picker).

Their transcripts are not in the catalog (it caches only Command Code's), so each session of
the scope is read through its interop reader (`interop/sources.py`) and the texts of its model
context — user text, assistant text, tool-call inputs, and tool results with `deep` — are
matched like the catalog's `LIKE` search: case-insensitively, newest first, with a one-line
snippet and the match's spans. A session that cannot be read is left out and described in
`errors`; nothing is written.
"""

from __future__ import annotations

from typing import Any

from ..sessions.texts import KINDS, SHALLOW_KINDS, entry_texts
from .search import SearchHit, like_snippet


def search_foreign(source: str, query: str, cwd: str, *, all_projects: bool = False, limit: int = 20,
                   deep: bool = False, errors: list[str] | None = None) -> list[tuple[SearchHit, Any]]:
    """(hit, session) pairs of `source`'s sessions (`claude` or `pi`) matching `query`, newest first."""
    from ..interop.sources import list_foreign

    wanted = query.strip().lower()
    kinds = KINDS if deep else SHALLOW_KINDS
    found: list[tuple[SearchHit, Any]] = []
    for session in list_foreign(source, cwd, all_projects=all_projects, errors=errors):
        stamps = {row.id: row.timestamp for row in session.rows}
        for entry_id, message in zip(session.context_ids, session.messages):
            texts, _prompt = entry_texts({"type": "message", "message": message})
            for kind, body in texts:
                if kind in kinds and wanted in body.lower():
                    snippet, spans = like_snippet(body, query.strip())
                    found.append((SearchHit(session.id, session.name, str(session.path), entry_id,
                                            str(stamps.get(entry_id) or session.modified), kind, snippet, spans, None),
                                  session))
    found.sort(key=lambda pair: (pair[0].timestamp, pair[0].session_id), reverse=True)
    return found[:limit]
