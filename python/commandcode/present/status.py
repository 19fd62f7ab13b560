"""How a session's status is shown: the rows of `/status` and `sessions status`
(`status_lines`) and the shell's built-in status line (`builtin_line`), both from the status
dict of `agent.info.session_status`."""

from __future__ import annotations

from typing import Any


def builtin_line(status: dict[str, Any]) -> str:
    """The built-in status line for a status dict (`agent.info.session_status`)."""
    checkpoints = status.get("checkpoints", {})
    parts = [
        status.get("name") or "(unnamed)",
        status.get("model") or "-",
        f"effort {status['effort']}" if status.get("effort") else None,
        f"{status.get('context_tokens', 0):,} tokens ({status.get('context_percent', 0)}%)",
        f"${status.get('cost_usd', 0.0):.4f}",
        status.get("permission_mode", "default"),
        f"{checkpoints.get('count', 0)} checkpoint(s)" + (" paused" if checkpoints.get("paused") else ""),
    ]
    return " · ".join(part for part in parts if part)


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
