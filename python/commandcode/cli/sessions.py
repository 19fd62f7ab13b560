"""`commandcode sessions list|show|context|tree`: scriptable inspection of sessions.

The commands the argv fast path also runs (`list`, `search`, `show`, `context`, `du`, `fork`,
`clone`) are generated from the command table (`command_table.py`); the others are declared here. What
each prints is in the module named after it (`sessions_list.py`, `sessions_show.py`, ...).
"""

from __future__ import annotations

import inspect
from importlib import import_module
from typing import Any, Optional

import typer

from . import sessions_rename, sessions_show, sessions_status
from .command_table import COMMANDS, Command

app = typer.Typer(help="List and inspect sessions.", no_args_is_help=True)

JSON_OPTION = typer.Option(False, "--json", help="Print JSON instead of a table.")
REF_ARGUMENT = typer.Argument(..., help="Session id, id prefix, name or transcript path.")
SOURCE_OPTION = typer.Option("commandcode", "--source",
                             help="Whose sessions: commandcode, claude (Claude Code), pi, or all.")


ALL_PROJECTS_OPTION = typer.Option(False, "--all-projects", help="Every project, not just this directory's.")
ANNOTATIONS = {"argument": str, "switch": bool, "int": Optional[int], "str": Optional[str]}


def _declare(command: Command) -> None:
    """The typer command of one entry of the command table (`command_table.py`), calling its view."""
    module_name, function = command.view.split(":")

    def run(**arguments: Any) -> None:
        getattr(import_module(f"{__package__}.{module_name}"), function)(**arguments)

    parameters = []
    for param in command.params:
        if param.kind == "argument":
            default: Any = typer.Argument(..., help=param.help)
        else:
            default = typer.Option(param.default, *param.opts, help=param.help, min=1 if param.kind == "int" else None)
        annotation = str if param.default is not None and param.kind == "str" else ANNOTATIONS[param.kind]
        parameters.append(inspect.Parameter(param.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=annotation))
    run.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    run.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    run.__doc__ = command.help
    app.command(command.words[-1])(run)


for _command in COMMANDS:
    _declare(_command)


@app.command("tree")
def tree_command(ref: str = REF_ARGUMENT, as_json: bool = JSON_OPTION,
                 offset: int = typer.Option(0, min=0, help="First entry (file order) to include."),
                 limit: int = typer.Option(0, min=0, help="At most this many entries (0: all)."),
                 source: str = SOURCE_OPTION) -> None:
    """Every entry, its parent, and whether it is on the active path."""
    sessions_show.tree_view(ref, as_json, offset, limit, source)


@app.command("rename")
def rename_command(ref: str = REF_ARGUMENT, name: str = typer.Argument(..., help="The new name (unique in the project)."),
                   as_json: bool = typer.Option(False, "--json", help="Print the id and the stored name as JSON.")) -> None:
    """Names a session: a session_info entry and the meta title, as /rename writes them."""
    sessions_rename.rename_view(ref, name, as_json)


@app.command("status")
def status_command(ref: str = REF_ARGUMENT, as_json: bool = JSON_OPTION) -> None:
    """What /status shows: model, context, cost, lineage, compaction, checkpoints, trace ids."""
    sessions_status.status_view(ref, as_json)


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
