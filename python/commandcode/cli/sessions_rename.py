"""`commandcode sessions rename REF NAME [--json]`: through `AgentSession`, which takes the
session's writer (a session another process is writing is refused with one line) and writes the
`session_info` entry and the meta title at once.
"""

from __future__ import annotations

from ..present.console import handle_errors, print_json, safe, stdout


@handle_errors
def rename_view(ref: str, name: str, as_json: bool = False) -> None:
    """Names a session (unique in its project, at most 200 characters)."""
    from ..agent.runtime import AgentSession  # the agent only for the command that runs (start-up of the rest)
    from .launch_project import launch_project
    from .run import from_argv

    with AgentSession.for_reference(ref, project=launch_project()) as agent:
        stored = agent.rename(from_argv(name))
    if as_json:
        print_json({"id": agent.session_id, "name": stored})
    else:
        stdout.print(f"renamed {safe(agent.session_id, one_line=True)} to {safe(stored, one_line=True)}")
