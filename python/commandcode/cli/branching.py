"""`commandcode sessions label|goto` and `commandcode tree`: thin commands over `AgentSession`
(parse → call → render), registered on the `sessions` group and the root app. The copies
(`sessions fork|clone`) are `sessions_copy.py`'s, from the command table.

Data goes to stdout (`--json`: one object), notices to stderr; every refusal is one `error:`
line (plus a `hint:`), exit 1, and a usage error exit 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import typer

from ..errors import UsageError
from ..present.console import handle_errors, print_json, safe, stdout, warn

if TYPE_CHECKING:
    from ..agent.runtime import AgentSession

REF_ARGUMENT = typer.Argument(..., help="Session id, id prefix, name or transcript path.")
ENTRY_ARGUMENT = typer.Argument(..., help="Entry id (or a unique prefix of one), from `sessions tree REF`.")
JSON_OPTION = typer.Option(False, "--json", help="Print JSON.")


def _open(ref: str) -> AgentSession:
    from ..agent.runtime import AgentSession
    from .launch_project import launch_project

    return AgentSession.for_reference(ref, notify=warn, project=launch_project())


def label_command(ref: str = REF_ARGUMENT, entry: str = ENTRY_ARGUMENT,
                  text: Optional[str] = typer.Argument(None, help="The label; leave it out to clear the label.")) -> None:
    """Attach a label to an entry of a session's tree, or clear it."""
    target, changed = _open(ref).navigation.label(entry, text)
    if not changed:
        stdout.print(f"entry {safe(target)}: " + ("no label to clear" if not (text or "").strip() else "already labelled so")
                     + "; nothing written")
    elif (text or "").strip():
        stdout.print(f"labelled entry {safe(target)}")
    else:
        stdout.print(f"cleared the label of entry {safe(target)}")


def goto_command(ref: str = REF_ARGUMENT, entry: str = ENTRY_ARGUMENT,
                 summary: Optional[str] = typer.Option(None, "--summary", help="Summary of the branch left behind."),
                 no_summary: bool = typer.Option(False, "--no-summary", help="Write no branch summary."),
                 as_json: bool = JSON_OPTION) -> None:
    """Move a session's leaf to an entry, so it resumes there.

    A summary of the branch left behind is written unless --no-summary (by default as the
    `branchSummary` setting says; --summary gives the text)."""
    if summary is not None and no_summary:
        raise UsageError("--summary and --no-summary cannot be used together", hint="pass one of them")
    choice: str | bool | None = summary if summary is not None else (False if no_summary else None)
    result = _open(ref).navigation.goto(entry, summary=choice)
    if as_json:
        print_json(result.to_dict())
        return
    stdout.print(f"moved to entry {safe(result.target)}; the session resumes there")
    if result.summary_entry_id:
        stdout.print(f"summarized {result.left_entries} entr{'y' if result.left_entries == 1 else 'ies'} left behind "
                     f"(entry {safe(result.summary_entry_id)})")


def tree_command(ref: str = REF_ARGUMENT) -> None:
    """Browse a session's whole tree full-screen: jump, fold, search, label, filter."""
    import sys

    agent = _open(ref)  # a reference naming no session says so first, terminal or not
    if not (sys.stdin.isatty() and sys.stderr.isatty()):  # Textual draws on stderr
        raise UsageError("the tree navigator needs a terminal", hint="use `commandcode sessions tree REF --json` in scripts")
    from ..ui.app import run_screen
    from ..ui.screens.tree import TreeScreen

    result = run_screen(TreeScreen(agent))
    if isinstance(result, str) and result:
        stdout.print(safe(result))


def register(app: typer.Typer, sessions_app: typer.Typer) -> None:
    """Adds the commands to the root app (`tree`) and to the `sessions` group."""
    sessions_app.command("label")(handle_errors(label_command))
    sessions_app.command("goto")(handle_errors(goto_command))
    app.command("tree")(handle_errors(tree_command))
