"""`commandcode sessions status REF [--json]`: what `/status` shows, read only
(`AgentSession.status`, `present.status.status_lines`).
"""

from __future__ import annotations

from ..present.console import handle_errors, print_json, safe, stdout
from ..present.status import status_lines


@handle_errors
def status_view(ref: str, as_json: bool = False) -> None:
    """One session's status: what `/status` shows in the shell."""
    from ..agent.runtime import AgentSession
    from .launch_project import launch_project

    agent = AgentSession.for_reference(ref, project=launch_project())
    status = agent.status()
    if as_json:
        print_json(status)
        return
    for label, value in status_lines(status):
        stdout.print(f"[bold]{label}[/]: {safe(value, one_line=True)}")
