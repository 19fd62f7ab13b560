"""What the resume picker shows and does, without Textual: the rows of a scope (this directory,
every worktree of its repository, every project), filtered by name, first and last prompt and
full text (with the matching snippet), by git branch, with or without headless sessions, sorted
by recency or relevance; and the rename and delete it offers. The screen (`picker.py`) only draws
this and maps keys to it, so the behaviour is tested here and in Pilot tests alike.

`source` picks whose sessions are shown: Command Code's (the default), Claude Code's (`claude`),
pi's (`pi`) or `all` of them (read through the interop readers, searched through
`catalog.foreign_search`); `source_of(summary)` says whose a row is. Another agent's session is
imported (`import_picked`) when it is picked, then resumed like any other."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ...catalog.listing import list_sessions, newest_first_key
from ...catalog.summary import SessionSummary
from ...errors import CommandcodeError

# Renaming, deleting and searching import what they need when first used: the first paint does
# not wait for those modules.

SCOPES = ("directory", "worktrees", "projects")
SOURCES = ("commandcode", "claude", "pi", "all")
FOREIGN = ("claude", "pi")
SEARCH_LIMIT = 500
FIRST_PAINT = 40  # rows of the first paint: a 40-line terminal shows about 35
PICKER_BUILD_SECONDS = 0.5  # a search typed in the picker indexes briefly; the background indexer does the rest


class Row:
    """One session in the picker, with the snippet that matched the filter (if any)."""

    __slots__ = ("rank", "snippet", "spans", "summary")

    def __init__(self, summary: SessionSummary, snippet: str | None = None,
                 spans: list[tuple[int, int]] | None = None, rank: int | None = None) -> None:
        self.summary, self.snippet, self.spans, self.rank = summary, snippet, spans or [], rank

    @property
    def title(self) -> str:
        summary = self.summary
        text = summary.name or summary.first_message or "(no prompt yet)"
        return " ".join(text.split())


class PickerData:
    """The picker's state: scope, filter, branch, headless, sort; `rows()` is what to show."""

    def __init__(self, cwd: Path, *, current_id: str | None = None, scope: str = "directory",
                 source: str = "commandcode") -> None:
        self.cwd = cwd
        self.current_id = current_id
        self.scope = scope
        self.source = source
        self._foreign: dict[str, str] = {}  # path -> source, of the other agents' sessions listed
        self.query = ""
        self.branch: str | None = None
        self.headless = False
        self.sort = "recency"
        self.warnings: list[str] = []
        self._cache: dict[tuple[str, bool, str], list[SessionSummary]] = {}
        self._lock = threading.Lock()  # the screen loads the whole list in a thread after its first paint
        self._early: tuple[tuple[str, bool, str, int], threading.Thread, list[list[Row]]] | None = None

    def _list(self, limit: int | None) -> list[SessionSummary]:
        rows = [] if self.source not in ("commandcode", "all") else list_sessions(
            self.cwd, include_headless=self.headless, all_projects=self.scope == "projects",
            worktrees=self.scope == "worktrees", errors=self.warnings, limit=limit)
        if self.source == "commandcode":
            return rows
        for name in FOREIGN:
            if self.source in (name, "all"):
                rows += self._foreign_rows(name)
        rows.sort(key=newest_first_key, reverse=True)
        return rows[:limit] if limit is not None else rows

    def _foreign_rows(self, name: str) -> list[SessionSummary]:
        from ...interop.sources import list_foreign

        found = []
        for session in list_foreign(name, os.fspath(self.cwd), all_projects=self.scope == "projects",
                                    errors=self.warnings):
            try:
                size = os.stat(session.path).st_size
            except OSError:
                size = 0
            found.append(SessionSummary(
                id=session.id, name=session.name, created=session.created, modified=session.modified,
                message_count=session.message_count, first_message=session.first_message(),
                git_branch=session.git_branch, entrypoint=session.entrypoint,
                parent_session_id=session.parent_session_id, path=str(session.path), cwd=session.cwd,
                skipped_lines=len(session.skipped_lines), size=size))
            self._foreign[str(session.path)] = name
        return found

    def source_of(self, summary: SessionSummary) -> str:
        """`commandcode`, `claude` or `pi`: whose session a row is."""
        return self._foreign.get(summary.path, "commandcode")

    def cycle_source(self) -> str:
        """The next source: Command Code, Claude Code, pi, all of them."""
        self.source = SOURCES[(SOURCES.index(self.source) + 1) % len(SOURCES)] if self.source in SOURCES else SOURCES[0]
        return self.source

    def sessions(self) -> list[SessionSummary]:
        """Every session of the scope (headless ones when shown), newest first."""
        key = (self.scope, self.headless, self.source)
        with self._lock:
            if key not in self._cache:
                self._cache[key] = self._list(None)
            return self._cache[key]

    def loaded(self) -> bool:
        """Whether `sessions()` of the current scope is known (costs nothing now)."""
        return (self.scope, self.headless, self.source) in self._cache

    def first_rows(self, count: int) -> list[Row]:
        """The newest `count` rows of the scope without a filter: the first screenful, read with a
        `LIMIT` (the same rows, in the same order, as the head of `rows()`)."""
        if self.loaded():
            return self.rows()[:count]
        early, self._early = self._early, None
        if early is not None and early[0] == (self.scope, self.headless, self.source, count):
            early[1].join()
            if early[2]:
                return early[2][0]
        return [Row(summary) for summary in self._list(count)]

    def prefetch(self, count: int) -> None:
        """Starts reading `first_rows(count)` in a thread, so a screen that asks for them once its
        app has started finds them read: the folder check and the catalog's reads release the GIL
        while the app starts. A failure there is met again (and reported) by `first_rows`."""
        if self._early is not None or self.loaded():
            return
        found: list[list[Row]] = []

        def read() -> None:
            try:
                found.append([Row(summary) for summary in self._list(count)])
            except Exception:  # read again on the screen's thread, which reports it
                return

        thread = threading.Thread(target=read, name="picker-first-rows", daemon=True)
        self._early = ((self.scope, self.headless, self.source, count), thread, found)
        thread.start()

    def reload(self) -> None:
        with self._lock:
            self._cache.clear()

    def branches(self) -> list[str]:
        """The git branches the sessions of the scope started on."""
        return sorted({summary.git_branch for summary in self.sessions() if summary.git_branch})

    def cycle_branch(self) -> str | None:
        """The next branch filter: none, then each branch in turn."""
        choices: list[str | None] = [None, *self.branches()]
        at = choices.index(self.branch) if self.branch in choices else 0
        self.branch = choices[(at + 1) % len(choices)]
        return self.branch

    def rows(self) -> list[Row]:
        """The sessions to show, filtered and sorted; an exact name (or id) match first."""
        sessions = [summary for summary in self.sessions() if self.branch is None or summary.git_branch == self.branch]
        query = self.query.strip()
        if not query:
            return [Row(summary) for summary in sessions]
        wanted = query.casefold()
        from ...catalog.search import search_sessions

        hits: dict[str, tuple[str, list[tuple[int, int]], int]] = {}  # path -> its best hit
        found = [] if self.source not in ("commandcode", "all") else search_sessions(
            query, self.cwd, all_projects=self.scope == "projects", worktrees=self.scope == "worktrees",
            limit=SEARCH_LIMIT, errors=self.warnings, build_seconds=PICKER_BUILD_SECONDS)
        if self.source != "commandcode":
            from ...catalog.foreign_search import search_foreign

            for name in FOREIGN:
                if self.source in (name, "all"):
                    found += [hit for hit, _session in search_foreign(
                        name, query, os.fspath(self.cwd), all_projects=self.scope == "projects", limit=SEARCH_LIMIT,
                        errors=self.warnings)]
        for rank, hit in enumerate(found):
            hits.setdefault(hit.path, (hit.snippet, hit.spans, rank))
        rows = []
        for summary in sessions:
            fields = (summary.name, summary.first_message, summary.last_prompt, summary.id)
            best = hits.get(summary.path)
            if best is not None:
                rows.append(Row(summary, *best))
            elif any(isinstance(value, str) and wanted in value.casefold() for value in fields):
                rows.append(Row(summary, rank=SEARCH_LIMIT))
        if self.sort == "relevance":
            rows.sort(key=lambda row: row.rank if row.rank is not None else SEARCH_LIMIT)
        # a session named exactly what was typed (or with that id) comes first, in either sort
        rows.sort(key=lambda row: not ((row.summary.name or "").casefold().strip() == wanted or row.summary.id == query))
        return rows

    def toggle_sort(self) -> str:
        self.sort = "relevance" if self.sort == "recency" else "recency"
        return self.sort

    def widen(self, scope: str) -> str:
        """Switches to `scope`, or back to this directory when it is the scope already."""
        self.scope = "directory" if self.scope == scope else scope
        return self.scope

    def import_picked(self, summary: SessionSummary) -> SessionSummary:
        """The Command Code session to resume for a picked row: the row itself, or for another
        agent's session its import (made now, or the earlier one: `interop/importer.py`).

        Raises:
            CommandcodeError: the import was refused (no working directory, nothing to import).
        """
        source = self.source_of(summary)
        if source == "commandcode":
            return summary
        from ...catalog.summary import summarize
        from ...interop.importer import import_session
        from ...interop.sources import open_foreign
        from ...sessions.reader import open_session

        result = import_session(open_foreign(source, Path(summary.path)))
        self.reload()
        return summarize(open_session(result.path, tail=False))

    def _refuse_foreign(self, summary: SessionSummary, what: str) -> None:
        source = self.source_of(summary)
        if source != "commandcode":
            raise CommandcodeError(f"a {source} session cannot be {what} here; it is left as it is",
                                   hint=f"import it first: commandcode import {source} {summary.id}")

    def rename(self, summary: SessionSummary, name: str) -> str:
        """Renames a session (unique within its project); raises `CommandcodeError` when refused."""
        self._refuse_foreign(summary, "renamed")
        from ...agent.manage import rename_session
        from ...sessions.files import SessionFiles

        written = rename_session(SessionFiles.for_transcript(summary.path), name, self._session_dir(summary))
        self.reload()
        return written

    def delete(self, summary: SessionSummary) -> bool:
        """Deletes a session (not the current one); True when it went to the trash."""
        self._refuse_foreign(summary, "deleted")
        from ...agent.manage import delete_session
        from ...sessions.files import SessionFiles

        _, trashed = delete_session(SessionFiles.for_transcript(summary.path), current_id=self.current_id)
        self.reload()
        return trashed

    def _session_dir(self, summary: SessionSummary) -> Path:
        return Path(summary.cwd) if summary.cwd and os.path.isdir(summary.cwd) else self.cwd


def describe(summary: SessionSummary, *, current: bool) -> list[tuple[str, str]]:
    """The preview pane's (label, value) lines."""
    lines = [("name", summary.name or "(unnamed)"), ("id", summary.id + ("  (current session)" if current else ""))]
    if summary.lineage:
        lines.append(("lineage", summary.lineage))
    lines += [("messages", str(summary.message_count)), ("size", human_size(summary.size)),
              ("modified", summary.modified[:19].replace("T", " ")), ("created", summary.created[:19].replace("T", " ")),
              ("branch", summary.git_branch or "-"), ("directory", summary.cwd or "-")]
    if summary.entrypoint == "print":
        lines.append(("kind", "headless (-p)"))
    if summary.damaged:
        lines.append(("damaged", summary.damaged))
    lines += [("first prompt", summary.first_message or "-"), ("last prompt", summary.last_prompt or "-")]
    return lines


def human_size(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000  # type: ignore[assignment]
    return f"{size} B"
