"""`commandcode import claude|pi REF [--json]`: another agent's session as a Command Code session.

REF is a session id, unique id prefix, name, or transcript path (`interop.sources`). The work is
`interop.importer.import_session`; this prints where the session went, or where an earlier
import of it already is.
"""

from __future__ import annotations

import os

import typer

from ..present.console import handle_errors, print_json, safe, stdout, warn

app = typer.Typer(help="Import another agent's session (Claude Code, pi) as a Command Code session.",
                  no_args_is_help=True)

JSON_OPTION = typer.Option(False, "--json", help="Print the result as JSON.")


@handle_errors
def run_import(tool: str, ref: str, as_json: bool) -> None:
    from ..interop.importer import import_session
    from ..interop.sources import resolve_foreign

    result = import_session(resolve_foreign(tool, ref, os.getcwd()))
    if as_json:
        print_json(result.to_dict())
        return
    for line in result.warnings:
        warn(line)
    if result.already:
        stdout.print(f"already imported: {safe(result.session_id, one_line=True)} "
                     f"({safe(str(result.path), one_line=True)})")
        return
    runs = f", {result.runs} sub-agent run{'s' if result.runs != 1 else ''}" if result.runs else ""
    stdout.print(f"imported {safe(tool, one_line=True)} session {safe(result.source.id, one_line=True)} as "
                 f"{safe(result.session_id, one_line=True)}: {result.entries} entries, "
                 f"{result.checkpoints} checkpoints{runs} ({safe(str(result.path), one_line=True)})")


@app.command("claude")
def claude_command(ref: str = typer.Argument(..., help="Claude Code session id, id prefix, title or transcript path."),
                   as_json: bool = JSON_OPTION) -> None:
    """Import a Claude Code session (read from ~/.claude, or $CLAUDE_CONFIG_DIR)."""
    run_import("claude", ref, as_json)


@app.command("pi")
def pi_command(ref: str = typer.Argument(..., help="pi session id, id prefix, name or file path."),
               as_json: bool = JSON_OPTION) -> None:
    """Import a pi session (read from ~/.pi/agent, or $PI_CODING_AGENT_DIR)."""
    run_import("pi", ref, as_json)
