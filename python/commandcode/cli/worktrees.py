"""`commandcode worktrees list|remove` and the `-w/--worktree [NAME]` launch option: thin
commands over `workspace.worktrees`."""

from __future__ import annotations

import os
from typing import Any

import typer

from ..present.console import handle_errors, print_json, safe, stdout

app = typer.Typer(help="Session worktrees of this repository (.commandcode/worktrees/).", no_args_is_help=True)

WORKTREE_FLAGS = ("-w", "--worktree")


def expand_worktree_flag(argv: list[str]) -> list[str]:
    """`-w`/`--worktree` take an optional name: a bare flag (at the end, or before another
    option) becomes `--worktree=` (a generated name); `-w NAME` stays as it is."""
    out: list[str] = []
    for index, word in enumerate(argv):
        if word == "--":
            return out + argv[index:]
        following = argv[index + 1] if index + 1 < len(argv) else None
        if word in WORKTREE_FLAGS and (following is None or following.startswith("-")):
            out.append("--worktree=")
        else:
            out.append(word)
    return out


@app.command("list")
@handle_errors
def list_command(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The session worktrees, with their branches and whether they hold unsaved work."""
    from ..workspace.worktrees import changes, list_worktrees

    rows: list[dict[str, Any]] = []
    for tree in list_worktrees(os.getcwd()):
        pending = changes(tree) if tree.path.is_dir() else ["missing folder"]
        rows.append({"name": tree.name, "path": str(tree.path), "branch": tree.branch, "generated": tree.generated,
                     "changes": pending})
    if as_json:
        print_json(rows)
        return
    if not rows:
        stdout.print("no session worktrees in this repository")
    for row in rows:
        state = ", ".join(row["changes"]) or "clean"
        stdout.print(f"{safe(row['name'], one_line=True)}  {safe(row['branch'], one_line=True)}  {state}  "
                     f"{safe(row['path'], one_line=True)}")


@app.command("remove")
@handle_errors
def remove_command(name: str = typer.Argument(..., help="The worktree's name."),
                   force: bool = typer.Option(False, "--force", help="Remove it even with changes or commits.")) -> None:
    """Remove a session worktree and its worktree-NAME branch."""
    from ..workspace.worktrees import remove_worktree

    removed = remove_worktree(os.getcwd(), name, force=force)
    stdout.print(f"removed the worktree {safe(removed.name, one_line=True)} and its branch "
                 f"{safe(removed.branch, one_line=True)}")
