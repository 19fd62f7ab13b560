"""What `/status` and `commandcode sessions status REF` report about one session.

`session_status(agent)` gathers it into one JSON-ready dict: id, transcript path (None before the
first save), name, cwd, model, effort, permission mode (the one set, else the settings'
`defaultMode`), context tokens and their share of the model's window, cost so far (the
`usage.costUsd` of the active path's assistant entries), lineage, compaction totals
(`meta.compaction`, and what this process's compactions saved), checkpoint state (count, backups,
the bytes of the store objects the session's checkpoints use, paused for low disk), the turn
trace ids, share state (the real CLI's `<sid>.share.json`, when there is one: its link and our
expiry), the scratchpad folder (the real CLI's path, and whether it exists yet; None where the
real CLI gives the session none) and the disk footprint line (`workspace.footprint.status_line`:
transcript, sidecars, checkpoints, scratchpad). Reading only: nothing is written, and the
scratchpad is not created.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

from ..checkpoints.records import read_checkpoints
from ..config.paths import objects_dir
from ..errors import CommandcodeError
from ..sessions.meta import read_meta
from ..sessions.reader import Session, open_session
from ..sessions.tokens import context_tokens, estimate_tokens
from ..workspace.scratchpad import scratchpad_path
from .tracing import trace_ids

if TYPE_CHECKING:
    from .runtime import AgentSession

DEFAULT_CONTEXT_WINDOW = 200_000


def context_window(agent: AgentSession) -> int:
    """The window the shell, compaction and `sessions status` all use: the settings'
    `contextWindow`, else the model's own (`providers.json`), else 200,000 tokens."""
    window = agent.compaction.window()
    return window if window > 0 else DEFAULT_CONTEXT_WINDOW


def path_cost(session: Session) -> float:
    """The summed `usage.costUsd` of the assistant entries on the session's active path."""
    context = session.context()
    total = 0.0
    for entry in session.read_entries(context.entry_ids):
        usage = entry.get("usage")
        cost = usage.get("costUsd") if isinstance(usage, dict) else None
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
            total += float(cost)
    return total


def checkpoint_state(agent: AgentSession) -> dict[str, Any]:
    """Count, backups, store bytes and the disk-low pause of the session's checkpoints. The count
    is of the checkpoints a user can rewind to, as `checkpoints list` and the rewind menu show them
    (one count everywhere: hidden records of rewinds and redos are not checkpoints to a user)."""
    try:
        records = read_checkpoints(agent.files.checkpoints)
        rewindable = len(agent.rewinds.checkpoint_choices())
    except (CommandcodeError, OSError) as error:
        return {"count": 0, "backups": 0, "store_bytes": 0, "paused": False, "error": str(error)}
    digests = {item.store_object for record in records for item in record.files if item.store_object}
    store_bytes = 0
    objects = objects_dir()
    for digest in digests:
        try:
            store_bytes += os.stat(objects / digest[:2] / digest[2:]).st_size
        except (OSError, ValueError):
            pass
    manager = agent.handle.manager
    return {"count": rewindable, "backups": sum(record.backup_count for record in records),
            "store_bytes": store_bytes, "paused": manager is not None and manager.paused}


def share_state(path: os.PathLike[str] | str) -> dict[str, Any]:
    """`{"shared": False}`, or the share's link and expiry from `<sid>.share.json` (format §14.2)."""
    try:
        with open(path, encoding="utf-8") as source:
            record = json.load(source)
    except FileNotFoundError:
        return {"shared": False}
    except (OSError, ValueError) as error:
        return {"shared": False, "path": str(path), "error": f"unreadable share file: {error}"}
    if not isinstance(record, dict):
        return {"shared": False, "path": str(path), "error": "unreadable share file: not a JSON object"}
    url = record.get("url") if isinstance(record.get("url"), str) else None
    expires = record.get("expiresAt")
    expires_at = expires / 1000 if isinstance(expires, (int, float)) and not isinstance(expires, bool) else None
    expired = expires_at is not None and expires_at <= time.time()
    return {"shared": url is not None and not expired, "path": str(path), "url": url, "expired": expired,
            "expires_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires_at)) if expires_at else None}


def _copy_kind(meta: dict[str, Any], session: Session | None) -> str | None:
    """"fork" or "clone" for a copied session (a clone's header names its source transcript,
    `parentSession`; a fork's does not), None for an original one."""
    if not meta.get("parentSessionId"):
        return None
    return "clone" if session is not None and session.header.parent_session else "fork"


def session_status(agent: AgentSession, *, session: Session | None = None) -> dict[str, Any]:
    """Everything `/status` shows, as a JSON-ready dict (see the module docstring)."""
    files = agent.files
    exists = files.transcript.exists()
    if session is None and exists:
        try:
            session = open_session(files.transcript, tail=False)  # counts and the path's cost
        except (CommandcodeError, OSError):
            session = None
    meta = read_meta(files.meta) if exists else {}
    agent.models.adopt_recorded(session)  # `sessions status`: the model the session goes on with
    if agent.handle.messages or session is None:
        messages, entry_ids = agent.handle.messages, agent.handle.entry_ids
    else:
        context = session.context()
        messages, entry_ids = context.messages, context.entry_ids
    tokens = context_tokens(messages, entry_ids, session.read_entries) if session is not None else estimate_tokens(messages)
    window = context_window(agent)
    found = meta.get("compaction")
    compaction: dict[str, Any] = found if isinstance(found, dict) else {}
    model = agent.models.model.model_id
    return {
        "id": agent.session_id,
        "path": str(files.transcript) if exists else None,
        "name": agent.name,
        "cwd": str(agent.cwd),
        "model": model,
        "effort": agent.models.effort or (session.effort if session is not None else None),
        "permission_mode": agent.models.effective_permission_mode(),  # the one set, else the settings' defaultMode
        "context_tokens": tokens,
        "context_window": window,
        "context_percent": round(100 * tokens / window, 1),
        "cost_usd": round(path_cost(session), 6) if session is not None else 0.0,
        "lineage": {"parent_session_id": meta.get("parentSessionId"), "forked_at": meta.get("forkedAt"),
                    "branch_point": meta.get("branchPoint"), "kind": _copy_kind(meta, session)},
        "compaction": {"count": compaction.get("count", 0), "tokens_saved": compaction.get("tokensSaved", 0),
                       "tokens_saved_this_run": agent.compaction.saved,
                       "last_tokens_saved": compaction.get("lastTokensSaved"),
                       "last_compacted_at": compaction.get("lastCompactedAt")},
        "checkpoints": checkpoint_state(agent),
        "trace_ids": trace_ids(meta),
        "current_trace_id": agent.turns.trace_id,
        "share": share_state(files.share),
        "scratchpad": _scratchpad(agent),
        "disk": agent.disk_line().removeprefix("disk: ") if exists else None,
    }


def _scratchpad(agent: AgentSession) -> dict[str, Any]:
    """The session's scratchpad folder (the real CLI's path) and whether it exists yet."""
    path = scratchpad_path(agent.session_id, str(agent.cwd))
    return {"path": path, "exists": path is not None and os.path.isdir(path)}
