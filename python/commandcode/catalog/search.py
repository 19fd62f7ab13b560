"""Full-text search over sessions: user text, assistant text and tool-call inputs (tool results
too with `deep`), one hit per matching text with its session, entry id, time and a snippet.

With FTS5 + trigram a query of three characters or more is a phrase match ranked by bm25 (or
newest first); a shorter query, or a SQLite without FTS5, uses `LIKE` (newest first). Matching
ignores case. When the catalog cannot be used, the transcripts of the scope are read whole and
matched in Python — slow, but the same hits. Snippets are plain text on one line; `spans` are the
`(start, end)` character ranges of the match inside it, for highlighting.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import asdict, dataclass
from typing import Any

from .cached import catalog_session, refreshed
from .db import Catalog, describe, searchable
from .index import rows_in
from .listing import Scope, scan_sessions
from .summary import SessionSummary
from .texts import KINDS, SHALLOW_KINDS, read_texts

MIN_TRIGRAM = 3
SNIPPET_TOKENS = 48
SNIPPET_CONTEXT = 60
OPEN, CLOSE = "\x02", "\x03"


@dataclass(frozen=True)
class SearchHit:
    """One matching text of one session."""

    session_id: str
    name: str | None
    path: str
    entry_id: str
    timestamp: str
    kind: str
    snippet: str
    spans: list[tuple[int, int]]
    score: float | None

    def to_dict(self) -> dict[str, Any]:
        row = asdict(self)
        row["spans"] = [list(span) for span in self.spans]
        return row


def marked_snippet(text: str) -> tuple[str, list[tuple[int, int]]]:
    """A snippet with `OPEN`/`CLOSE` markers as one line of plain text and its match spans."""
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    length, opened = 0, -1
    for char in text:
        if char == OPEN:
            opened = length
        elif char == CLOSE and opened >= 0:
            spans.append((opened, length))
            opened = -1
        else:
            plain.append(" " if char in "\r\n\t" else char)
            length += 1
    return "".join(plain), spans


def like_snippet(text: str, query: str) -> tuple[str, list[tuple[int, int]]]:
    """A snippet around the first case-insensitive occurrence of `query` in `text`."""
    at = text.lower().find(query.lower())
    if at < 0:
        return marked_snippet(text[: SNIPPET_CONTEXT * 2])
    start, end = max(0, at - SNIPPET_CONTEXT), min(len(text), at + len(query) + SNIPPET_CONTEXT)
    prefix, suffix = ("…" if start else ""), ("…" if end < len(text) else "")
    return marked_snippet(f"{prefix}{text[start:at]}{OPEN}{text[at:at + len(query)]}{CLOSE}{text[at + len(query):end]}{suffix}")


def search_sessions(query: str, cwd: str | os.PathLike[str], *, all_projects: bool = False, limit: int = 20,
                    deep: bool = False, newest: bool = False, use_catalog: bool | None = None,
                    errors: list[str] | None = None, worktrees: bool = False) -> list[SearchHit]:
    """Hits for `query` in this directory's sessions (every worktree's with `worktrees`, every
    project's with `all_projects`), best first (bm25) or newest first, at most `limit`. Headless
    sessions are searched too."""
    from ..config.env import catalog_enabled

    problems: list[str] = [] if errors is None else errors
    text = query.strip()
    if not text:
        return []
    scope = Scope(cwd, all_projects=all_projects, worktrees=worktrees)
    kinds = KINDS if deep else SHALLOW_KINDS
    if use_catalog is None:
        use_catalog = catalog_enabled()
    if use_catalog:
        with catalog_session(problems) as catalog:
            if catalog is not None:
                try:
                    return _search_catalog(catalog, scope, text, kinds, limit, newest, problems)
                except sqlite3.Error as error:
                    problems.append(f"the session catalog cannot be used: {catalog.path}: {describe(error)}; "
                                    "searching the transcripts directly")
    return _search_files(scope, text, kinds, limit, problems)


def _search_catalog(catalog: Catalog, scope: Scope, text: str, kinds: tuple[str, ...], limit: int, newest: bool,
                    problems: list[str]) -> list[SearchHit]:
    refreshed(catalog, scope.folders, problems)
    sessions = {summary.path: summary for summary in rows_in(catalog, scope.folders, headless=True)
                if scope.keeps(summary)}
    connection = catalog.connection
    connection.execute("CREATE TEMP TABLE IF NOT EXISTS scope (path TEXT PRIMARY KEY)")
    connection.execute("DELETE FROM temp.scope")
    by_text = {searchable(path): summary for path, summary in sessions.items()}  # the text table's spelling
    connection.executemany("INSERT OR IGNORE INTO temp.scope VALUES (?)", [(path,) for path in by_text])
    kind_marks = ", ".join("?" for _ in kinds)
    ranked = catalog.fts and len(text) >= MIN_TRIGRAM
    if ranked:
        phrase = '"' + searchable(text).replace('"', '""') + '"'
        order = "ts DESC" if newest else "rank"
        cursor = connection.execute(
            f"SELECT path, entry, ts, kind, snippet(texts, 0, ?, ?, '…', {SNIPPET_TOKENS}), bm25(texts) FROM texts "
            f"WHERE texts MATCH ? AND kind IN ({kind_marks}) AND path IN (SELECT path FROM temp.scope) "
            f"ORDER BY {order} LIMIT ?", [OPEN, CLOSE, phrase, *kinds, limit])
        found = [(path, entry, ts, kind, *marked_snippet(snippet), score) for path, entry, ts, kind, snippet, score in cursor]
    else:
        pattern = "%" + searchable(text).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        cursor = connection.execute(
            f"SELECT path, entry, ts, kind, text FROM texts WHERE text LIKE ? ESCAPE '\\' AND kind IN ({kind_marks}) "
            "AND path IN (SELECT path FROM temp.scope) ORDER BY ts DESC LIMIT ?", [pattern, *kinds, limit])
        found = [(path, entry, ts, kind, *like_snippet(body, text), None) for path, entry, ts, kind, body in cursor]
    return [_hit(by_text[path], entry, ts, kind, snippet, spans, score)
            for path, entry, ts, kind, snippet, spans, score in found if path in by_text]


def _hit(summary: SessionSummary, entry: str, ts: str, kind: str, snippet: str, spans: list[tuple[int, int]],
         score: float | None) -> SearchHit:
    return SearchHit(summary.id, summary.name, summary.path, entry, ts, kind, snippet, spans,
                     None if score is None else float(score))


def _search_files(scope: Scope, text: str, kinds: tuple[str, ...], limit: int, problems: list[str]) -> list[SearchHit]:
    """The search without a catalog: every transcript of the scope read whole."""
    wanted = text.lower()
    hits: list[SearchHit] = []
    for summary in scope_sessions(scope, problems):
        try:
            rows = read_texts(summary.path, 0)[0]
        except OSError:
            continue
        for entry, ts, kind, body in rows:
            if kind in kinds and wanted in body.lower():
                hits.append(_hit(summary, entry, ts, kind, *like_snippet(body, text), None))
    hits.sort(key=lambda hit: hit.timestamp, reverse=True)
    return hits[:limit]


def scope_sessions(scope: Scope, problems: list[str]) -> list[SessionSummary]:
    """Every session of a scope by a folder scan, headless ones included."""
    return scan_sessions(scope, include_headless=True, problems=problems)
