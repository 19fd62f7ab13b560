"""`commandcode sessions list|show|context|tree`: scriptable inspection of sessions.

The options are declared here for typer; what each command prints is in `session_views.py`
(which the argv fast path also calls).
"""

from __future__ import annotations

from typing import Optional

import typer

from . import session_info, session_views

app = typer.Typer(help="List and inspect sessions.", no_args_is_help=True)

JSON_OPTION = typer.Option(False, "--json", help="Print JSON instead of a table.")
REF_ARGUMENT = typer.Argument(..., help="Session id, id prefix, name or transcript path.")
SOURCE_OPTION = typer.Option("commandcode", "--source",
                             help="Whose sessions: commandcode, claude (Claude Code), pi, or all.")


LIMIT_OPTION = typer.Option(None, "--limit", min=1, help="At most this many.")
ALL_PROJECTS_OPTION = typer.Option(False, "--all-projects", help="Every project, not just this directory's.")


@app.command("list")
def list_command(
    all_sessions: bool = typer.Option(False, "--all", help="Include headless (-p) sessions."),
    all_projects: bool = ALL_PROJECTS_OPTION,
    worktrees: bool = typer.Option(False, "--worktrees", help="Every worktree of this git repository."),
    branch: Optional[str] = typer.Option(None, "--branch", help="Only sessions started on this git branch."),
    limit: Optional[int] = LIMIT_OPTION,
    as_json: bool = JSON_OPTION,
    source: str = SOURCE_OPTION,
) -> None:
    """Sessions of this directory, newest first."""
    session_views.list_view(all_sessions, all_projects, as_json, limit, branch, worktrees, source)


@app.command("search")
def search_command(
    query: str = typer.Argument(..., help="Text to find (any length; case is ignored)."),
    all_projects: bool = ALL_PROJECTS_OPTION,
    limit: Optional[int] = LIMIT_OPTION,
    deep: bool = typer.Option(False, "--deep", help="Search tool results too."),
    newest: bool = typer.Option(False, "--newest", help="Newest first instead of best match first."),
    as_json: bool = JSON_OPTION,
    source: str = SOURCE_OPTION,
) -> None:
    """Full-text search of sessions: user and assistant text and tool calls."""
    session_views.search_view(query, all_projects, limit, deep, newest, as_json, source)


@app.command("show")
def show_command(ref: str = REF_ARGUMENT, as_json: bool = JSON_OPTION, source: str = SOURCE_OPTION) -> None:
    """One session's details."""
    session_views.show_view(ref, as_json, source)


@app.command("context")
def context_command(ref: str = REF_ARGUMENT, as_json: bool = JSON_OPTION,
                    stats: bool = typer.Option(False, "--stats", help="Build the context and print only its size (with --json: one JSON line)."),
                    source: str = SOURCE_OPTION) -> None:
    """The messages the model sees when the session is resumed."""
    session_views.context_view(ref, as_json, stats, source)


@app.command("tree")
def tree_command(ref: str = REF_ARGUMENT, as_json: bool = JSON_OPTION,
                 offset: int = typer.Option(0, min=0, help="First entry (file order) to include."),
                 limit: int = typer.Option(0, min=0, help="At most this many entries (0: all)."),
                 source: str = SOURCE_OPTION) -> None:
    """Every entry, its parent, and whether it is on the active path."""
    session_views.tree_view(ref, as_json, offset, limit, source)


@app.command("du")
def du_command(
    all_projects: bool = typer.Option(False, "--all-projects", help="Every project, not just this directory's."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Disk use: per project and for the largest sessions, and what a sweep would free."""
    from .sessions_du import du_view

    du_view(all_projects, as_json)


@app.command("rename")
def rename_command(ref: str = REF_ARGUMENT, name: str = typer.Argument(..., help="The new name (unique in the project)."),
                   as_json: bool = typer.Option(False, "--json", help="Print the id and the stored name as JSON.")) -> None:
    """Names a session: a session_info entry and the meta title, as /rename writes them."""
    session_info.rename_view(ref, name, as_json)


@app.command("status")
def status_command(ref: str = REF_ARGUMENT, as_json: bool = JSON_OPTION) -> None:
    """What /status shows: model, context, cost, lineage, compaction, checkpoints, trace ids."""
    session_info.status_view(ref, as_json)


@app.command("relink")
def relink_command(ref: str = REF_ARGUMENT) -> None:
    """Moves a session whose directory is gone to this directory (transcript and sidecars)."""
    from . import sessions_resume

    sessions_resume.relink_view(ref)


@app.command("pick")
def pick_command(all_projects: bool = ALL_PROJECTS_OPTION, source: str = SOURCE_OPTION) -> None:
    """The full-screen resume picker; prints the picked session's id and directory."""
    from . import sessions_resume

    sessions_resume.pick_view(all_projects, source)
