"""`commandcode export REF [--format html|md|jsonl] [-o PATH] [--branch active|all] [--full] [--redact]
[--source commandcode|claude|pi|all]`.

A thin command over `AgentSession.export` (and, for a Claude Code or pi session, over
`interop.foreign_export.export_foreign`): it resolves the session, shows a progress bar on a terminal
for big sessions, and prints where the file went and what was left out or redacted.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from ..errors import UsageError
from ..present.console import handle_errors, safe, stdout, warn

PROGRESS_FROM_ENTRIES = 2_000  # smaller sessions export before a bar would be drawn


def register(app: typer.Typer) -> None:
    app.command("export")(export_command)


@handle_errors
def export_command(
    ref: str = typer.Argument(..., help="Session id, id prefix, name or transcript path."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="html, md or jsonl (default: the extension's, "
                                      "else the defaultExportFormat setting, else html)."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="File or folder to write (default: "
                                         "command-code-session-<id>.<ext> here)."),
    branch: str = typer.Option("active", "--branch", help="active (the current branch) or all (every branch, as a tree)."),
    full: bool = typer.Option(False, "--full", help="The whole active path through every compaction."),
    redact: bool = typer.Option(False, "--redact", help="Redact secrets in a jsonl export too (html and md always are)."),
    source: str = typer.Option("commandcode", "--source", help="Whose session: commandcode, claude (Claude Code), pi, "
                               "or all (a jsonl export of claude/pi is the session converted to Command Code's format)."),
) -> None:
    """Write a session to an html page, a markdown file or a JSONL copy."""
    from ..agent.runtime import AgentSession
    from .launch_project import launch_project

    if branch not in ("active", "all"):
        raise UsageError(f"unknown --branch {branch!r}", hint="use --branch active or --branch all")
    if branch == "all" and full:
        raise UsageError("--full and --branch all cannot be used together", hint="--branch all already shows everything")
    selection = "all" if branch == "all" else "full" if full else "context"
    foreign = None
    if source != "commandcode":
        from ..interop.foreign import ForeignSession
        from .sessions_show import load_from, warn_about

        found = load_from(ref, source)
        if isinstance(found, ForeignSession):
            foreign = found
            warn_about(found)
        else:
            ref = str(found.path)  # `--source all` found one of ours
    project = launch_project()
    with _Progress() as progress:
        if foreign is not None:
            from ..interop.foreign_export import export_foreign

            result = export_foreign(foreign, project, path=output, fmt=fmt, selection=selection,
                                    redact_jsonl=redact, progress=progress)
        else:
            agent = AgentSession.start(Path.cwd(), reference=ref, project=project)
            result = agent.export(output, fmt, selection=selection, redact_jsonl=redact, progress=progress)
    if result.skipped_lines:
        warn(f"{result.skipped_lines} corrupt line(s) of the transcript were left out")
    details = [f"{result.messages} message(s)"]
    if result.format != "jsonl" or redact:
        from ..export.redact import summary

        details.append(summary(result.redactions))
    stdout.print(f"exported {safe(result.format)} to {safe(str(result.path))} ({', '.join(details)})")


class _Progress:
    """A rich progress bar on stderr when it is a terminal and the export is big; else nothing."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        return self

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            if not sys.stderr.isatty() or total < PROGRESS_FROM_ENTRIES:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("exporting"), BarColumn(), TaskProgressColumn(), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("export", total=total)
        self._bar.update(self._task, completed=done, total=total)

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.stop()
