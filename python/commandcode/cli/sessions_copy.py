"""`commandcode sessions fork|clone`: a copy of a session (the whole tree and checkpoints, or the
active branch only) through `agent.branching.copy_by_reference`, which needs no session object.

Typer-free: the command table (`command_table.py`) declares them, so the argv fast path runs
them without importing typer (a fifth of a 1 GB fork's time) and typer generates the same
commands for every other argv. Data goes to stdout (`--json`: one object), the unreadable lines
left out to stderr; a refusal is one `error:` line (plus a `hint:`), exit 1.
"""

from __future__ import annotations

from pathlib import Path

from ..present.console import handle_errors, print_json, print_lines, warn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..sessions.fork import CopyResult


@handle_errors
def fork_view(ref: str, name: str | None = None, as_json: bool = False) -> None:
    """A new session holding the whole tree and checkpoints of the one `ref` names."""
    from ..agent.branching import copy_by_reference

    _print_copy(copy_by_reference(ref, Path.cwd(), "fork", name=name, notify=warn), "forked", as_json)


@handle_errors
def clone_view(ref: str, as_json: bool = False) -> None:
    """A new session holding only the active branch of the one `ref` names, without checkpoints."""
    from ..agent.branching import copy_by_reference

    _print_copy(copy_by_reference(ref, Path.cwd(), "clone", notify=warn), "cloned", as_json)


def _print_copy(copy: CopyResult, verb: str, as_json: bool) -> None:
    files, source_id = copy.files, copy.parent_session_id
    if as_json:
        print_json({"id": files.session_id, "path": str(files.transcript), "parent_session_id": source_id})
        return
    print_lines(f"{verb} {source_id} into {files.session_id}", str(files.transcript))
