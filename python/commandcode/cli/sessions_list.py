"""What `commandcode sessions list` and `sessions search` print, as plain functions.

Typer-free, so the argv fast path (`fast_path.py`) runs these read-only commands without
importing the command-line framework; `sessions.py` declares the same commands for typer.
Each view turns errors into one stderr line and exit 1 (`handle_errors`).
"""

from __future__ import annotations

import os

from ..present.console import handle_errors, print_json, safe, stdout, warn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



def _summaries(source: str, all_sessions: bool, all_projects: bool, errors: list[str], *, limit: int | None = None,
               branch: str | None = None, worktrees: bool = False) -> list[dict[str, Any]]:
    if source != "commandcode":
        from ..interop.sources import check_source

        source = check_source(source)
    rows: list[dict[str, Any]] = []
    if source in ("commandcode", "all"):
        from ..catalog.listing import list_sessions

        for found in list_sessions(os.getcwd(), include_headless=all_sessions, all_projects=all_projects,
                                   errors=errors, limit=limit, branch=branch, worktrees=worktrees):
            rows.append(found.to_dict() if source == "commandcode" else {**found.to_dict(), "source": "commandcode"})
        if all_sessions:  # and the sidecars of runs without a transcript (catalog/leftovers.py)
            rows = _with_leftovers(rows, all_projects=all_projects, worktrees=worktrees, branch=branch, limit=limit,
                                   source=source)
    for name in ("claude", "pi"):
        if source in (name, "all"):
            from ..interop.sources import list_foreign, summary

            rows.extend(summary(session) for session in list_foreign(name, os.getcwd(), all_projects=all_projects,
                                                                     errors=errors))
    if source == "all":
        rows.sort(key=lambda row: (str(row["modified"]), str(row["id"])), reverse=True)
    return rows


def _with_leftovers(rows: list[dict[str, Any]], *, all_projects: bool, worktrees: bool, branch: str | None,
                    limit: int | None, source: str) -> list[dict[str, Any]]:
    from ..catalog.leftovers import leftover_rows
    from ..catalog.listing import Scope
    from ..catalog.times import sort_key

    found = [row for row in leftover_rows(Scope(os.getcwd(), all_projects=all_projects, worktrees=worktrees).folders)
             if branch is None or row["git_branch"] == branch]
    if not found:
        return rows
    if source != "commandcode":
        found = [{**row, "source": "commandcode"} for row in found]
    merged = sorted([*rows, *found], key=lambda row: (sort_key(str(row["modified"])), sort_key(str(row["created"])),
                                                      str(row["id"])), reverse=True)
    return merged[:limit] if limit is not None else merged


@handle_errors
def list_view(all_sessions: bool = False, all_projects: bool = False, as_json: bool = False,
              limit: int | None = None, branch: str | None = None, worktrees: bool = False,
              source: str = "commandcode") -> None:
    """Sessions of this directory (every worktree's, or every project's), newest first."""
    from .catalog_progress import report_builds

    errors: list[str] = []
    report_builds()
    summaries = _summaries(source, all_sessions, all_projects, errors, limit=limit, branch=branch, worktrees=worktrees)
    for error in errors:
        warn(error)
    odd = [summary for summary in summaries if summary.get("warnings")]
    if odd:
        warn(f"{len(odd)} {odd[0]['source']} session(s) read with warnings (first: {str(odd[0]['id'])[:8]}); "
             f"`commandcode sessions show ID --source {odd[0]['source']}` lists them")
    if as_json:
        print_json(summaries)
        return
    if not summaries:
        hidden = "" if all_sessions else " (headless `-p` runs and --no-session leftovers are listed with --all)"
        stdout.print(f"No sessions here yet{hidden}. Start one with `commandcode`.")
        return
    from rich.table import Table  # only for terminal output

    table = Table(box=None, pad_edge=False)
    with_source = any("source" in summary for summary in summaries)
    for column in (("SOURCE",) if with_source else ()) + ("ID", "NAME", "MODIFIED", "MSGS", "BRANCH", "FIRST MESSAGE"):
        table.add_column(column, no_wrap=column != "FIRST MESSAGE", overflow="ellipsis")
    for summary in summaries:
        first = str(summary["first_message"]).splitlines()[0][:60] if summary["first_message"] else ""
        if summary.get("lineage"):
            first = f"({summary['lineage']}) {first}"
        if summary.get("damaged"):
            first = f"[damaged: {summary['damaged']}] {first}"
        if summary.get("leftover"):
            first = (f"[no transcript: {summary['checkpoint_count']} checkpoint(s); "
                     f"commandcode rewind {summary['path']}]")
        cells = [safe(str(summary["id"])[:8], one_line=True), safe(summary["name"] or "", one_line=True),
                 safe(str(summary["modified"])[:19].replace("T", " "), one_line=True), str(summary["message_count"]),
                 safe(str(summary.get("git_branch") or ""), one_line=True), safe(first, one_line=True)]
        table.add_row(*([str(summary["source"])] if with_source else []), *cells)
    stdout.print(table)


@handle_errors
def search_view(query: str, all_projects: bool = False, limit: int | None = None, deep: bool = False,
                newest: bool = False, as_json: bool = False, source: str = "commandcode") -> None:
    """Full-text search of this directory's sessions (or every project's), of one source or all."""
    from ..catalog.search import search_sessions
    from .catalog_progress import report_builds, text_index_progress

    if not query.strip():
        from ..errors import UsageError

        raise UsageError("empty search query", hint="pass the text to look for")
    if source != "commandcode":
        from ..interop.sources import check_source

        source = check_source(source)
    errors: list[str] = []
    report_builds()
    count = limit or 20
    bar = text_index_progress()
    try:
        hits = [] if source not in ("commandcode", "all") else search_sessions(
            query, os.getcwd(), all_projects=all_projects, limit=count, deep=deep, newest=newest, errors=errors,
            progress=None if bar is None else bar[0])
    finally:
        if bar is not None:
            bar[1]()
    rows = [hit.to_dict() if source == "commandcode" else {**hit.to_dict(), "source": "commandcode"} for hit in hits]
    if source != "commandcode":
        from ..catalog.foreign_search import search_foreign

        for name in ("claude", "pi"):
            if source in (name, "all"):
                for hit, _session in search_foreign(name, query, os.getcwd(), all_projects=all_projects, limit=count,
                                                    deep=deep, errors=errors):
                    hits.append(hit)
                    rows.append({**hit.to_dict(), "source": name})
        if source == "all":  # ranks of different sources do not compare: newest first, then cut
            order = sorted(range(len(hits)), key=lambda index: (hits[index].timestamp, hits[index].session_id),
                           reverse=True)[:count]
            hits, rows = [hits[index] for index in order], [rows[index] for index in order]
    for error in errors:
        warn(error)
    if as_json:
        print_json(rows)
        return
    if not hits:
        stdout.print(f"No matches for {safe(query, one_line=True)}.")
        return
    for hit, row in zip(hits, rows):
        snippet, cursor = [], 0
        for start, end in hit.spans:
            snippet.append(safe(hit.snippet[cursor:start], one_line=True))
            snippet.append(f"[bold reverse]{safe(hit.snippet[start:end], one_line=True)}[/]")
            cursor = end
        snippet.append(safe(hit.snippet[cursor:], one_line=True))
        title = safe(hit.name or hit.session_id[:8], one_line=True)
        if row.get("source", "commandcode") != "commandcode":
            title = f"\\[{safe(str(row['source']), one_line=True)}] {title}"  # a literal [, not markup
        stdout.print(f"[bold]{title}[/] [dim]{safe(hit.session_id[:8], one_line=True)} {safe(hit.entry_id, one_line=True)} "
                     f"{safe(hit.timestamp[:19].replace('T', ' '), one_line=True)} {hit.kind}[/]")
        stdout.print(f"  {''.join(snippet)}")
