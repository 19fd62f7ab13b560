"""`commandcode sweep` (retention: archive or delete old sessions, restore an archived one) and
`commandcode doctor --gc` (the object store's garbage collection, in `doctor.py`): thin commands over
`workspace.retire.plan`, `workspace.retire.run`, `workspace.archive` and `checkpoints.gc`."""

from __future__ import annotations

import re
from typing import Any, Optional

import typer

from ..errors import UsageError
from ..present.console import handle_errors, print_json, safe, stderr, stdout

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(d|h|w)?\s*$", re.IGNORECASE)
_UNITS = {"d": 1.0, "h": 1 / 24, "w": 7.0}


def parse_age(text: str) -> float:
    """`30d`, `12h`, `2w` or a bare number of days, in days.

    Raises:
        UsageError: anything else.
    """
    match = _AGE.match(text)
    if match is None:
        raise UsageError(f"invalid age {text!r}", hint="use a number of days, hours or weeks: 30d, 12h, 2w")
    return float(match.group(1)) * _UNITS[(match.group(2) or "d").lower()]


def _human(size: int) -> str:
    from ..workspace.footprint import human

    return human(size)


def _progress_bar(enabled: bool) -> tuple[Any, Any]:
    """A rich progress bar on stderr (none when not a terminal or quiet): `(context, callback)`."""
    from contextlib import nullcontext

    if not enabled or not stderr.is_terminal:
        return nullcontext(), None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    bar = Progress(TextColumn("sweeping"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                   console=Console(stderr=True), transient=True)  # a real Console: Live enters it
    task = bar.add_task("", total=None)

    def advance(done: int, total: int, session_id: str) -> None:
        bar.update(task, completed=done, total=total, description=session_id[:8])

    return bar, advance


def _summary(report: Any) -> None:
    data = report.to_json()
    verb = {("archive", True): "would archive", ("delete", True): "would delete",
            ("archive", False): "archived", ("delete", False): "deleted"}[(report.mode, report.dry_run)]
    if report.disabled_by:
        stdout.print(f"nothing swept: {report.disabled_by} in the settings (retention is off)")
        return
    if report.finished_interrupted:
        stdout.print(f"finished {report.finished_interrupted} session(s) an interrupted sweep had started")
    for row in report.sessions:
        name = f" ({safe(row['name'], one_line=True)})" if row.get("name") else ""
        stdout.print(f"{verb} {row['id']}{name} ({safe(row['project'], one_line=True)}) {_human(row['bytes'])}")
    for row in report.skipped:
        stdout.print(f"kept {row['id']}: {row['reason']}")
    count = len(report.sessions)
    freed = "would free" if report.dry_run else "freed"
    line = f"{verb} {count} session{'s' if count != 1 else ''}; {freed} {_human(data['freed_bytes'])}"
    details = [f"sessions {_human(report.freed_bytes)}"]
    if report.gc is not None:
        details.append(f"checkpoint objects {_human(report.gc.deleted_bytes)}")
    if report.scratchpads:
        details.append(f"{report.scratchpads} stale scratchpad(s) {_human(report.scratchpad_bytes)}")
    if report.archive_bytes:
        details.append(f"archives written {_human(report.archive_bytes)}")
    stdout.print(f"{line} ({', '.join(details)})")


def _restore(session_id: str, as_json: bool) -> None:
    from ..workspace.archive import find_archive, restore_archive

    archive = find_archive(session_id)
    if archive is None:
        from ..errors import SessionNotFoundError

        raise SessionNotFoundError(f"no archived session {session_id!r}", hint="see `commandcode sweep --list-archives`")
    trailer = restore_archive(archive)
    if as_json:
        print_json({"restored": trailer["sessionId"], "project": trailer["project"], "files": len(trailer["files"]),
                    "objects": len(trailer["objects"])})
    else:
        stdout.print(f"restored session {trailer['sessionId']} in project {safe(trailer['project'], one_line=True)}: "
                     f"{len(trailer['files'])} file(s), {len(trailer['objects'])} checkpoint object(s)")


def _list_archives(as_json: bool) -> None:
    from ..workspace.archive import list_archives, read_trailer

    rows = []
    for path in list_archives():
        row: dict[str, Any] = {"id": path.name.removesuffix(".ccarchive"), "project": path.parent.name,
                               "path": str(path), "bytes": path.stat().st_size}
        try:
            trailer = read_trailer(path)
            row.update({"created": trailer.get("created"), "files": len(trailer["files"])})
        except Exception as error:  # a damaged archive is listed with why, not a failure
            row["problem"] = str(error)
        rows.append(row)
    if as_json:
        print_json(rows)
        return
    if not rows:
        stdout.print("No archived sessions (`commandcode sweep --archive` makes them).")
    for row in rows:
        state = f"damaged: {row['problem']}" if "problem" in row else f"archived {row.get('created')}"
        stdout.print(f"{row['id']} ({safe(row['project'], one_line=True)}) {_human(row['bytes'])} {safe(state, one_line=True)}")


def register(app: typer.Typer) -> None:
    @app.command("sweep")
    @handle_errors
    def sweep_command(
        dry_run: bool = typer.Option(False, "--dry-run", help="Show what would go, change nothing."),
        archive: bool = typer.Option(False, "--archive", help="Move old sessions into zstd archives (restorable) "
                                     "instead of deleting them."),
        older_than: Optional[str] = typer.Option(None, "--older-than", help="Age by last activity, e.g. 30d, 12h "
                                                 "(default: cleanupPeriodDays, 30)."),
        include_named: bool = typer.Option(False, "--include-named", help="Sweep named sessions too."),
        restore: Optional[str] = typer.Option(None, "--restore", metavar="ID", help="Bring an archived session back."),
        list_archives: bool = typer.Option(False, "--list-archives", help="List the archived sessions."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
        auto: bool = typer.Option(False, "--auto", hidden=True, help="The daily background run."),
        quiet: bool = typer.Option(False, "--quiet", hidden=True),
        keep: list[str] = typer.Option([], "--keep", hidden=True, help="A session open now (the shell's)."),
    ) -> None:
        """Delete (or --archive) sessions whose last activity is older than the retention period."""
        if restore is not None:
            if dry_run or archive or older_than or include_named or list_archives:
                raise UsageError("--restore takes no other sweep option but --json",
                                 hint="run `commandcode sweep --restore ID` on its own")
            _restore(restore, as_json)
            return
        if list_archives:
            _list_archives(as_json)
            return
        from ..workspace.retire.plan import plan_sweep
        from ..workspace.retire.run import run_sweep
        from .launch_project import launch_project

        project = launch_project()
        settings = project.settings()  # a malformed file: its one line (SettingsError)
        days = parse_age(older_than) if older_than is not None else float(settings.cleanup_period_days)
        if auto:
            archive = settings.cleanup_mode != "delete"
        plan = plan_sweep(project.cwd, older_than_days=days, include_named=include_named,
                          period_setting=settings.cleanup_period_days, keep=keep)
        context, progress = _progress_bar(not (quiet or as_json))
        with context:
            report = run_sweep(plan, archive=archive, dry_run=dry_run, progress=progress)
        if as_json:
            print_json(report.to_json())
        elif not quiet:
            _summary(report)
