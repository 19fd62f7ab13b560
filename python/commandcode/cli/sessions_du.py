"""`commandcode sessions du`: the footprint report (`workspace.footprint`) as a table or JSON,
with what `sweep --dry-run` would free. `blobs` are the raw sha256 backups in `file-history/`
(hard links to one shared copy: a blob linked from several sessions is counted once, apart).
A sidecar that is not a regular file is listed as skipped; when the sweep's plan cannot be made
(such a file in place of a checkpoints file) what it would free is shown as unknown, with why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..present.console import handle_errors, print_json, safe, stdout

if TYPE_CHECKING:
    from ..config.context import ProjectContext

_KINDS = ("transcript", "sidecars", "index", "objects", "blobs", "scratchpad")


def _would_free(project: ProjectContext) -> dict[str, Any]:
    from ..errors import CommandcodeError
    from ..workspace.retire.plan import plan_sweep

    settings = project.settings()  # a malformed file: its one line (SettingsError)
    try:
        plan = plan_sweep(project.cwd, older_than_days=float(settings.cleanup_period_days), include_named=False,
                          period_setting=settings.cleanup_period_days)
    except (CommandcodeError, OSError) as error:  # e.g. a FIFO in place of a checkpoints file
        return {"sessions": None, "bytes": None, "older_than_days": float(settings.cleanup_period_days),
                "disabled_by": None, "unknown": str(error)}
    return {"sessions": len(plan.chosen), "bytes": plan.freed_bytes, "older_than_days": plan.older_than_days,
            "disabled_by": plan.disabled_by}


def _table(*headers: str, text_columns: int = 1) -> Any:
    """A plain table whose numbers never wrap or shrink: the text columns (names) give way."""
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for index, header in enumerate(headers):
        if index < text_columns:
            table.add_column(header, overflow="ellipsis", no_wrap=True, min_width=8)
        else:
            table.add_column(header, justify="right", no_wrap=True, min_width=max(len(header), 8))
    return table


@handle_errors
def du_view(all_projects: bool = False, as_json: bool = False) -> None:
    from ..workspace.footprint import footprint, human
    from .launch_project import launch_project

    project = launch_project()
    report = footprint(project.cwd, all_projects=all_projects)
    report["sweep_would_free"] = _would_free(project)
    if as_json:
        print_json(report)
        return
    projects = _table("project", "sessions", *_KINDS, "archives", "total")
    for row in report["projects"]:
        projects.add_row(safe(row["project"], one_line=True), str(row["sessions"]),
                         *(human(row[kind]) for kind in _KINDS), human(row["archives"]), human(row["total"]))
    stdout.print(projects)
    if report["top_sessions"]:
        top = _table("session", "project", *_KINDS, "shared", "total", text_columns=2)
        for row in report["top_sessions"]:
            top.add_row(row["id"][:8], safe(row["project"], one_line=True), *(human(row[kind]) for kind in _KINDS),
                        human(row["shared_objects"] + row["shared_blobs"]), human(row["total"]))
        stdout.print()
        stdout.print(top)
    free = report["sweep_would_free"]
    stdout.print()
    stdout.print(f"checkpoint objects shared by several sessions: {human(report['shared_objects'])} (counted once); "
                 f"object store {human(report['store'])}")
    stdout.print(f"raw sha256 blobs (file-history, the real CLI's format) shared by several sessions: "
                 f"{human(report['shared_blobs'])} (counted once)")
    stdout.print(f"data dir {safe(report['data_dir'], one_line=True)}: {human(report['data_dir_total'])}")
    for mark in report["skipped"]:
        stdout.print(f"skipped (not a regular file, not counted): {safe(mark, one_line=True)}")
    if free.get("unknown"):
        stdout.print(f"`commandcode sweep --dry-run` would free: unknown ({safe(free['unknown'], one_line=True)})")
    elif free["disabled_by"]:
        stdout.print(f"sweep: off ({free['disabled_by']})")
    else:
        stdout.print(f"`commandcode sweep --dry-run` would free {human(free['bytes'])} "
                     f"({free['sessions']} session(s) inactive for over {free['older_than_days']:g} days)")
