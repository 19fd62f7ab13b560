"""`/worktree [NAME]` ("work in a worktree" mid-session) and `/worktrees`: the session worktrees
of this repository, from the shell (`workspace.worktrees`)."""

from __future__ import annotations

from ...errors import CommandcodeError
from ..slash import Shell, SlashCommand


def _enter(shell: Shell, args: str) -> None:
    """Creates (or reuses) a worktree and continues in a new session inside it; the session left
    behind stays as it is (resume it by id)."""
    from ...agent.runtime import AgentSession
    from ...workspace.worktrees import create_worktree, worktree_of

    name = args.strip() or None
    if name is not None and len(name.split()) > 1:
        raise CommandcodeError("/worktree takes one name", hint="/worktree NAME, or /worktree for a generated name")
    current = worktree_of(shell.cwd)
    if current is not None and (name is None or name == current.name):
        raise CommandcodeError(f"this session already works in the worktree {current.name}",
                               hint="/worktree OTHER-NAME makes another one")
    tree = create_worktree(current.main_root if current is not None else shell.cwd, name, project=shell.agent.handle.project)
    previous = shell.agent
    agent = AgentSession.start(tree.path, model=previous.models.model, summarizer=previous.summarizer, notify=previous.notify)
    shell.switch_to(agent, keep_grants=True)
    left = f"; the previous session {previous.session_id} stays resumable" if previous.files.transcript.exists() else ""
    shell.notice(f"working in the worktree {tree.path} on branch {tree.branch} (a new session{left}); "
                 "tool calls into the main checkout are refused")


def _list(shell: Shell, args: str) -> None:
    from ...workspace.worktrees import changes, list_worktrees

    if args.strip():
        raise CommandcodeError("/worktrees takes no arguments", hint="remove one with `commandcode worktrees remove NAME`")
    trees = list_worktrees(shell.cwd)
    if not trees:
        shell.print("no session worktrees in this repository")
    for tree in trees:
        state = ", ".join(changes(tree)) if tree.path.is_dir() else "missing folder"
        shell.print(f"{tree.name}  {tree.branch}  {state or 'clean'}  {tree.path}")


def _names(shell: Shell, prefix: str) -> list[str]:
    from ...workspace.worktrees import list_worktrees

    try:
        return sorted(tree.name for tree in list_worktrees(shell.cwd) if tree.name.startswith(prefix))
    except CommandcodeError:
        return []


COMMANDS = [
    SlashCommand("worktree", _enter, "Work in a git worktree (.commandcode/worktrees/NAME) from here on",
                 help="/worktree [NAME]: creates the worktree NAME (a generated name when omitted) on a new branch "
                      "worktree-NAME, or reuses it, and continues in a new session inside it. While there, tool "
                      "calls that reach the main checkout are refused.", complete=_names),
    SlashCommand("worktrees", _list, "List this repository's session worktrees and whether they hold work"),
]
