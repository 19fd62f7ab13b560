"""`commandcode doctor`: maintenance of the data dir.

`--reindex` rebuilds the session catalog from the transcripts: the catalog is only a cache, so a
rebuild deletes it and reads every project folder again, with a progress bar on a terminal and
the rate at the end; no session file is written. `--gc [--dry-run]` removes checkpoint objects
no session, journal or archive references (`checkpoints/gc.py`).
"""

from __future__ import annotations

import sys

import typer

from ..present.console import handle_errors, stdout, warn


@handle_errors
def doctor_command(
    reindex: bool = typer.Option(False, "--reindex", help="Delete and rebuild the session catalog (a cache)."),
    gc: bool = typer.Option(False, "--gc", help="Remove checkpoint objects nothing references any more."),
    dry_run: bool = typer.Option(False, "--dry-run", help="With --gc: report, delete nothing."),
    as_json: bool = typer.Option(False, "--json", help="With --gc: print JSON."),
) -> None:
    """Checks and repairs commandcode's own caches and stores."""
    if not reindex and not gc:
        from ..errors import UsageError

        raise UsageError("nothing to do", hint="pass --reindex (rebuild the session catalog) or --gc [--dry-run]")
    if reindex:
        _reindex()
    if gc:
        _collect(dry_run, as_json)


def _collect(dry_run: bool, as_json: bool) -> None:
    from ..checkpoints.gc import collect
    from ..present.console import print_json
    from .sweep import _human

    report = collect(dry_run=dry_run)
    if as_json:
        print_json(report.to_json())
        return
    verb = "would remove" if dry_run else "removed"
    stdout.print(f"{verb} {report.deleted} unreferenced object(s), {_human(report.deleted_bytes)}; kept "
                 f"{report.kept} ({_human(report.kept_bytes)}, {report.young} only for being under an hour old)"
                 + (f"; {verb} {report.temporaries} stale temp file(s)" if report.temporaries else ""))


def _reindex() -> None:
    from ..catalog.cached import reindex as rebuild
    from ..catalog.db import CatalogUnavailable
    from ..errors import CommandcodeError
    from .catalog_progress import _Bar

    bar = _Bar()
    try:
        path, report, seconds, fts = rebuild(bar.update if sys.stderr.isatty() else None)
    except CatalogUnavailable as error:
        raise CommandcodeError(f"the session catalog cannot be rebuilt: {error}",
                               hint="listings keep working by scanning the project folders") from None
    for problem in report.problems or []:
        warn(problem)
    megabytes = report.bytes_read / 1e6
    search = "FTS5 trigram search" if fts else "LIKE search (this SQLite has no FTS5 trigram tokenizer)"
    stdout.print(f"rebuilt {path}: {report.changed} session(s), {megabytes:.1f} MB in {seconds:.2f} s "
                 f"({megabytes / max(seconds, 1e-9):.1f} MB/s, {report.changed / max(seconds, 1e-9):.0f} sessions/s); "
                 f"{search}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Adds `doctor` to the main app."""
    app.command("doctor")(doctor_command)
