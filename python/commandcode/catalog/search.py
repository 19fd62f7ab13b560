"""Full-text search over sessions: user text, assistant text and tool-call inputs (tool results
too with `deep`), one hit per matching text with its session, entry id, time and a snippet.

A query of three characters or more is looked up in the text index (`text_index.py`), which
gives the texts holding all of its trigrams; each candidate is read back from its transcript by
offset and kept only when its text holds the query. Ranked (the default), candidates are read
shortest first and the hits scored by bm25 on the text read back (the query's count in it and its
length); or newest first; tool results newest first. The
bytes the index does not cover yet are searched by a native scan (`_native.search_texts`), so an
index behind its transcripts never returns less; `search_sessions` first indexes what is pending
(with `progress`), for at most `build_seconds`, and leaves the rest to the background indexer. A
shorter query, a SQLite without FTS5 or a catalog that cannot be used is a native scan of every
transcript of the scope. Matching ignores case (Unicode: `éc` finds `ÉCOLE`). Snippets are plain
text on one line; `spans` are the `(start, end)` character ranges of the match, for highlighting.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable

from ..sessions.texts import KINDS, SHALLOW_KINDS
from ..values import Frozen
from .cached import catalog_session, refreshed
from .db import Catalog, describe, from_db, to_db
from .listing import Scope, scan_sessions
from .summary import SessionSummary
from .text_index import KIND_NAMES, FileState, Row, fold, read_back, scan

MIN_TRIGRAM = 3
RANK_POOL = 3
BM25_K1, BM25_B = 1.2, 0.75
SNIPPET_TOKENS = 48
SNIPPET_CONTEXT = 60
BUILD_SECONDS = 30.0
VERIFY_BATCH = 64
OPEN, CLOSE = "\x02", "\x03"


class SearchHit(Frozen):
    """One matching text of one session (a `Frozen` value: importing `dataclasses` would cost a
    warm search a fifth of its time)."""

    __slots__ = ("session_id", "name", "path", "entry_id", "timestamp", "kind", "snippet", "spans", "score")
    session_id: str
    name: str | None
    path: str
    entry_id: str
    timestamp: str
    kind: str
    snippet: str
    spans: list[tuple[int, int]]
    score: float | None

    def __init__(self, session_id: str, name: str | None, path: str, entry_id: str, timestamp: str, kind: str,
                 snippet: str, spans: list[tuple[int, int]], score: float | None) -> None:
        self._set(session_id=session_id, name=name, path=path, entry_id=entry_id, timestamp=timestamp, kind=kind,
                  snippet=snippet, spans=spans, score=score)

    def to_dict(self) -> dict[str, object]:
        row: dict[str, object] = {name: getattr(self, name) for name in self.__slots__}
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


Progress = Callable[[int, int], None]


class _Found:
    """What a hit needs of its session (and the scope checks): far cheaper than a listing row."""

    __slots__ = ("cwd", "id", "name", "path")

    def __init__(self, session_id: str, name: str | None, path: str, cwd: str) -> None:
        self.id, self.name, self.path, self.cwd = session_id, name, path, cwd


def _scope_rows(catalog: Catalog, scope: Scope) -> dict[str, _Found]:
    """The scope's sessions from the catalog's rows (headless ones too), newest first."""
    here = os.getcwd()
    cursor = catalog.connection.execute(
        f"SELECT path, id, name, cwd FROM sessions WHERE folder IN ({', '.join('?' for _ in scope.folders)}) "
        "ORDER BY sort_key DESC, created DESC, id DESC", [to_db(folder) for folder in scope.folders])
    found: dict[str, _Found] = {}
    for path, session_id, name, cwd in cursor:
        row = _Found(str(from_db(session_id)), None if name is None else str(from_db(name)), str(from_db(path)),
                     here if cwd is None else str(from_db(cwd)))
        if scope.keeps_path(row.path, row.cwd):
            found[row.path] = row
    return found


def search_sessions(query: str, cwd: str | os.PathLike[str], *, all_projects: bool = False, limit: int = 20,
                    deep: bool = False, newest: bool = False, use_catalog: bool | None = None,
                    errors: list[str] | None = None, worktrees: bool = False, progress: Progress | None = None,
                    build_seconds: float | None = None) -> list[SearchHit]:
    """Hits for `query` in this directory's sessions (every worktree's with `worktrees`, every
    project's with `all_projects`), best first (bm25) or newest first, at most `limit`. Headless
    sessions are searched too. Notices (a catalog that cannot be used, an index still behind) are
    added to `errors`, one line each."""
    from ..config.env import catalog_enabled

    problems: list[str] = [] if errors is None else errors
    text = query.strip()
    if not text or limit <= 0:
        return []
    scope = Scope(cwd, all_projects=all_projects, worktrees=worktrees)
    kinds = KINDS if deep else SHALLOW_KINDS
    if use_catalog is None:
        use_catalog = catalog_enabled()
    if use_catalog:
        with catalog_session(problems) as catalog:
            if catalog is not None:
                try:
                    return _search_catalog(catalog, scope, text, kinds, limit, newest, problems, progress,
                                           BUILD_SECONDS if build_seconds is None else build_seconds)
                except sqlite3.Error as error:
                    problems.append(f"the session catalog cannot be used: {catalog.path}: {describe(error)}; "
                                    "searching the transcripts directly")
    sessions = {summary.path: _Found(summary.id, summary.name, summary.path, summary.cwd)
                for summary in scope_sessions(scope, problems)}
    return _scan(sessions, [(state, 0, kinds) for state in _from_start(sessions)], text, limit, problems)


def _from_start(sessions: dict[str, _Found]) -> list[FileState]:
    found = []
    for path in sessions:
        try:
            size = os.stat(path).st_size
        except OSError:
            continue
        found.append(FileState(path, None, 0, size, 0, 0))
    return found


def _search_catalog(catalog: Catalog, scope: Scope, text: str, kinds: tuple[str, ...], limit: int, newest: bool,
                    problems: list[str], progress: Progress | None, build_seconds: float) -> list[SearchHit]:
    refreshed(catalog, scope.folders, problems)
    sessions = _scope_rows(catalog, scope)
    if not catalog.fts or len(text) < MIN_TRIGRAM:  # no trigram can find it: every text is scanned
        return _scan(sessions, [(state, 0, kinds) for state in _from_start(sessions)], text, limit, problems)
    from . import text_index

    connection = catalog.connection
    text_index.prepare(connection)
    deep = "result" in kinds
    files = _brought_up(catalog, list(sessions), progress, build_seconds, deep=deep)
    hits = _indexed_hits(connection, sessions, files, text, kinds, limit, newest)
    shallow = tuple(kind for kind in kinds if kind != "result")
    parts = [(state, state.indexed, shallow) for state in files if state.pending > 0]
    if deep:
        parts += [(state, state.results, ("result",)) for state in files if state.pending_results > 0]
    if parts:
        total = sum(state.size for state in files)
        pending = sum(state.pending_results if deep else state.pending for state in files)
        problems.append(f"the search index covers {100 * (total - pending) / max(total, 1):.0f}% of "
                        f"{_megabytes(total)}; the other {_megabytes(pending)} were searched directly "
                        "(the index is being built in the background)")
        hits += _scan(sessions, parts, text, limit, problems)
    return _ordered(hits, newest)[:limit]


def _megabytes(count: int) -> str:
    return f"{count / 1e6:.1f} MB"


def _brought_up(catalog: Catalog, paths: list[str], progress: Progress | None, build_seconds: float, *,
                deep: bool) -> list[FileState]:
    """The scope's index states after indexing what is pending (tool results too when `deep`),
    for at most `build_seconds`; the background indexer takes the rest, and another builder at
    work is not waited for."""
    from . import text_index

    connection = catalog.connection
    descriptor = text_index.lock(catalog.path, wait=False)
    if descriptor is None:
        return text_index.states(connection, paths)
    try:
        if text_index.needs_rebuild(connection):
            text_index.reset(connection)
        files = text_index.states(connection, paths)
        deadline = time.monotonic() + build_seconds
        if any(state.pending for state in files):
            text_index.build(connection, files, progress=progress, should_stop=lambda: time.monotonic() > deadline)
        if deep and any(state.indexed > state.results for state in files):
            text_index.build(connection, files, results=True, progress=progress,
                             should_stop=lambda: time.monotonic() > deadline)
    finally:
        os.close(descriptor)
    if any(state.pending or state.indexed > state.results for state in files):
        text_index.start_background([state.path for state in files if state.pending or state.indexed > state.results])
    return files


def _indexed_hits(connection: sqlite3.Connection, sessions: dict[str, _Found], files: list[FileState],
                  text: str, kinds: tuple[str, ...], limit: int, newest: bool) -> list[SearchHit]:
    """Hits from the index (the bytes it covers), each read back and checked in its transcript.

    The index says which texts hold all of the query's trigrams (`detail=none`); ranked, the
    candidates are read shortest first and the best `RANK_POOL * limit` that hold the query are
    scored by bm25 (`_score`) on the text read back; newest first, they are read by time."""
    by_id = {state.file_id: state for state in files if state.file_id is not None and state.indexed > 0}
    if not by_id:
        return []
    connection.execute("CREATE TEMP TABLE IF NOT EXISTS text_scope (id INTEGER PRIMARY KEY)")
    connection.execute("DELETE FROM temp.text_scope")
    connection.executemany("INSERT INTO temp.text_scope VALUES (?)", [(file_id,) for file_id in by_id])
    folded = fold(text)
    codes = [KIND_NAMES.index(kind) for kind in kinds]
    shallow = [code for code in codes if code != 3]
    # The query's own trigrams: FTS5 folds them as it folded the indexed text.
    match = " AND ".join('"' + trigram.replace('"', '""') + '"'
                         for trigram in sorted({text[at:at + 3] for at in range(len(text) - 2)}))
    hits: list[SearchHit] = []
    where = "AND r.file IN (SELECT id FROM temp.text_scope)"
    if shallow:
        average = None
        if not newest:
            texts, chars = dict(connection.execute(
                "SELECT key, value FROM text_index_meta WHERE key IN ('texts', 'chars')")).values()
            average = max(1.0, chars / max(1, texts))
        # The matches alone first: joined, the planner would walk text_rows instead of the FTS index.
        cursor = connection.execute(
            "WITH f AS MATERIALIZED (SELECT rowid AS id FROM text_fts WHERE text_fts MATCH ?) "
            f"SELECT r.file, r.offset, r.ordinal, r.kind FROM f JOIN text_rows r ON r.id = f.id "
            f"WHERE r.kind IN ({', '.join('?' for _ in shallow)}) {where} "
            f"ORDER BY {'r.ts DESC' if newest else 'r.length, r.id'}", [match, *shallow])
        found = _verified(cursor, by_id, sessions, text, folded, limit if newest else RANK_POOL * limit, average)
        hits += found if newest else sorted(found, key=lambda hit: hit.score or 0.0)[:limit]
    if 3 in codes:
        cursor = connection.execute(
            "WITH f AS MATERIALIZED (SELECT rowid AS id FROM result_fts WHERE result_fts MATCH ?) "
            f"SELECT r.file, r.offset, r.ordinal, r.kind FROM f JOIN text_rows r ON r.id = f.id "
            f"WHERE r.kind = 3 {where} ORDER BY r.ts DESC", [match])
        hits += _verified(cursor, by_id, sessions, text, folded, limit, None)
    return hits


def _score(count: int, length: int, average: float) -> float:
    """bm25's term part for a text holding the query `count` times in `length` characters
    (negative, best lowest, as FTS5's `rank`); the query's idf is the same for every hit."""
    return -(count * (BM25_K1 + 1)) / (count + BM25_K1 * (1 - BM25_B + BM25_B * length / average))


def _verified(cursor: sqlite3.Cursor, by_id: dict[int, FileState], sessions: dict[str, _Found], text: str,
              folded: str, limit: int, average: float | None) -> list[SearchHit]:
    """Up to `limit` candidates of `cursor` whose line, read back, still holds `text` (a
    transcript changed behind the index's back gives no wrong snippet), scored when `average`
    (the index's average text length) is given."""
    hits: list[SearchHit] = []
    while len(hits) < limit:
        batch = cursor.fetchmany(VERIFY_BATCH)
        if not batch:
            break
        by_file: dict[int, list[tuple[int, int, int]]] = {}
        for file_id, offset, ordinal, kind in batch:
            by_file.setdefault(file_id, []).append((offset, ordinal, kind))
        found: dict[tuple[int, int, int], SearchHit] = {}
        for file_id, wanted in by_file.items():
            state = by_id[file_id]
            try:
                lines = read_back(state.path, [offset for offset, _ordinal, _kind in wanted])
            except OSError:
                continue
            for (offset, ordinal, kind), rows in zip(wanted, lines):
                row = next((row for row in rows if row[1] == ordinal and row[2] == kind), None)
                if row is None:
                    continue
                body = fold(row[5])
                if folded in body:
                    score = None if average is None else _score(body.count(folded), len(row[5]), average)
                    found[(file_id, offset, ordinal)] = _row_hit(sessions[state.path], row, text, score)
        hits += [found[key] for key in ((f, o, n) for f, o, n, _k in batch) if key in found]
    return hits[:limit]


def _row_hit(summary: _Found, row: Row, text: str, score: float | None) -> SearchHit:
    _offset, _ordinal, kind, entry, stamp, body = row
    return _hit(summary, entry, stamp, KIND_NAMES[kind], *like_snippet(body, text), score)


def _scan(sessions: dict[str, _Found], parts: list[tuple[FileState, int, tuple[str, ...]]], text: str,
          limit: int, problems: list[str]) -> list[SearchHit]:
    """Hits by a native scan of each `(transcript, from offset, kinds)` in `parts`, newest first."""
    folded = fold(text)
    hits: list[SearchHit] = []
    for state, start, kinds in parts:
        mask = sum(1 << KIND_NAMES.index(kind) for kind in kinds)
        try:
            rows = scan(state.path, start, state.size, folded, mask, limit)
        except OSError as error:
            problems.append(f"{state.path}: cannot be searched ({error.strerror or error})")
            continue
        hits += [_row_hit(sessions[state.path], row, text, None) for row in rows]
    return _ordered(hits, True)[:limit]


def _ordered(hits: list[SearchHit], newest: bool) -> list[SearchHit]:
    """Newest first, or best first: bm25-ranked hits by score, then the unranked ones newest first."""
    by_time = sorted(hits, key=lambda hit: (hit.timestamp, hit.session_id, hit.entry_id), reverse=True)
    if newest:
        return by_time
    return sorted(by_time, key=lambda hit: (hit.score is None, hit.score or 0.0))


def _hit(summary: _Found, entry: str, ts: str, kind: str, snippet: str, spans: list[tuple[int, int]],
         score: float | None) -> SearchHit:
    return SearchHit(summary.id, summary.name, summary.path, entry, ts, kind, snippet, spans,
                     None if score is None else float(score))


def scope_sessions(scope: Scope, problems: list[str]) -> list[SessionSummary]:
    """Every session of a scope by a folder scan, headless ones included."""
    return scan_sessions(scope, include_headless=True, problems=problems)
