"""`commandcode doctor --reindex`: rebuilds the session catalog from the transcripts.

The catalog is only a cache, so a rebuild deletes it and reads every project folder again, with
a progress bar on a terminal and the rate at the end. No session file is written.
"""

from __future__ import annotations

import sys

import typer

from .output import handle_errors, stdout, warn


@handle_errors
def doctor_command(
    reindex: bool = typer.Option(False, "--reindex", help="Delete and rebuild the session catalog (a cache)."),
) -> None:
    """Checks and repairs commandcode's own caches."""
    if not reindex:
        from ..errors import UsageError

        raise UsageError("nothing to do", hint="run `commandcode doctor --reindex` to rebuild the session catalog")
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
