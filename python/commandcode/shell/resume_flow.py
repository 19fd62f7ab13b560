"""The questions a resume asks before it opens a session, through the `Shell` protocol: relink a
session whose directory is gone (`Shell.confirm`), a read-only view or a fork of one another
process is writing (`Shell.choose`), and for a big idle session, a summary or the full history.
`open_plan(shell, plan)` returns the session to switch to, or None when the user backs out.
The shell's launch flags (`-r`, `-c`, `--session`, `-r` without REF) use the same function."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CommandcodeError
from .slash import Shell

if TYPE_CHECKING:
    from ..agent.resume import ResumePlan
    from ..agent.runtime import AgentSession


def open_plan(shell: Shell, plan: ResumePlan, **options: Any) -> AgentSession | None:
    """Asks what the plan needs asked, then opens it (see the module docstring)."""
    options.setdefault("project", shell.agent.handle.project)  # the launch's context, kept when the session runs here
    missing = plan.missing_cwd
    if missing is not None:
        if shell.confirm(f"{missing} no longer exists. Relink the session to {shell.cwd}?", default=True):
            plan.relink()
        else:
            shell.notice(f"resuming in {plan.run_dir}; the session stays filed under {missing}")
    if plan.locked_by is not None:
        choice = shell.choose(f"process {plan.locked_by} is writing this session", [
            "open it read-only (nothing you do here is saved)", "fork it into a new session", "cancel"])
        if choice == 0:
            return plan.read_only(**options)
        if choice != 1:
            return None
        viewer = plan.read_only(**options)
        try:
            return viewer.navigation.fork()
        except NotImplementedError:
            raise CommandcodeError("forking is not available in this build",
                                   hint="open it read-only, or close it in the other process") from None
    agent = plan.open(**options)
    if plan.offer_summary:
        choice = shell.choose(f"this session holds about {plan.tokens:,} tokens and has been idle over an hour", [
            "resume from a summary (compacts first)", "resume the full history"], default=0)
        if choice is None:
            return None
        if choice == 0:
            with agent:
                try:
                    agent.compaction.compact()
                except NotImplementedError:
                    raise CommandcodeError("compaction is not available in this build",
                                           hint="resume the full history instead") from None
    return agent
