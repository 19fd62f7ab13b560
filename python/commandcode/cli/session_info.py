"""`commandcode sessions rename REF NAME` and `commandcode sessions status REF [--json]`.

Both go through `AgentSession`: a rename takes the session's writer (a session another process
is writing is refused with one line) and writes the `session_info` entry and the meta title at
once; `status` reads only (`agent.info.session_status`).
"""

from __future__ import annotations

from typing import Any

from .output import handle_errors, print_json, safe, stdout


@handle_errors
def rename_view(ref: str, name: str, as_json: bool = False) -> None:
    """Names a session (unique in its project, at most 200 characters)."""
    from ..agent.runtime import AgentSession  # the agent only for the command that runs (start-up of the rest)
    from .run import from_argv

    with AgentSession.for_reference(ref) as agent:
        stored = agent.rename(from_argv(name))
    if as_json:
        print_json({"id": agent.session_id, "name": stored})
    else:
        stdout.print(f"renamed {safe(agent.session_id, one_line=True)} to {safe(stored, one_line=True)}")


def status_lines(status: dict[str, Any]) -> list[tuple[str, str]]:
    """`(label, value)` rows of a status report, as `/status` and `sessions status` print them."""
    checkpoints = status["checkpoints"]
    compaction = status["compaction"]
    lineage = status["lineage"]
    rows = [
        ("id", status["id"]),
        ("path", status["path"] or "(not created yet)"),
        ("name", status["name"] or "(unnamed)"),
        ("cwd", status["cwd"]),
        ("model", status["model"] or "-"),
        ("effort", status["effort"] or "-"),
        ("permission mode", status["permission_mode"]),
        ("context", f"{status['context_tokens']:,} tokens, {status['context_percent']}% of {status['context_window']:,}"),
        ("cost", f"${status['cost_usd']:.4f}"),
        ("lineage", f"{'cloned' if lineage.get('kind') == 'clone' else 'forked'} from {lineage['parent_session_id']} "
                    f"at {lineage['forked_at'] or '?'}"
         if lineage["parent_session_id"] else "none (an original session)"),
        ("compaction", f"{compaction['count']} compaction(s), {compaction['tokens_saved']:,} tokens saved in all, "
                       f"{compaction.get('tokens_saved_this_run', 0):,} by this run"),
        ("checkpoints", f"{checkpoints['count']} checkpoint(s), {checkpoints['backups']} backup(s), "
                        f"{checkpoints['store_bytes']:,} bytes in the store"
                        + (", paused (low disk)" if checkpoints["paused"] else "")),
        ("trace", status["current_trace_id"] or (status["trace_ids"][-1] if status["trace_ids"] else "-")),
        ("share", _share_line(status["share"])),
        ("scratchpad", _scratchpad_row(status.get("scratchpad") or {})),
        ("disk", status.get("disk") or "(nothing on disk yet)"),
    ]
    return [(label, str(value)) for label, value in rows]


def _share_line(share: dict[str, Any]) -> str:
    if share.get("error"):
        return str(share["error"])
    if share.get("expired"):
        return f"expired at {share['expires_at']} ({share['url']})"
    if not share["shared"]:
        return "not shared"
    return f"shared at {share['url']}" + (f", expires {share['expires_at']}" if share.get("expires_at") else "")


def _scratchpad_row(scratchpad: dict[str, Any]) -> str:
    if not scratchpad.get("path"):
        return "-"
    return str(scratchpad["path"]) + ("" if scratchpad.get("exists") else " (not created yet)")


@handle_errors
def status_view(ref: str, as_json: bool = False) -> None:
    """One session's status: what `/status` shows in the shell."""
    from ..agent.runtime import AgentSession

    agent = AgentSession.for_reference(ref)
    status = agent.status()
    if as_json:
        print_json(status)
        return
    for label, value in status_lines(status):
        stdout.print(f"[bold]{label}[/]: {safe(value, one_line=True)}")
