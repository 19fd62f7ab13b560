"""Sub-agent runs stored beside their session (format §21): where they live, `SubagentRun` (one
run, the shape every reader gives: ours and Claude Code's), and `list_subagent_runs(files)`.

Layout: `<project folder>/<sid>/subagents/agent-<agent id>.jsonl`, a v3 transcript of the run's
own conversation (its header's `id` is `agent-<agent id>`), and `agent-<agent id>.meta.json`
beside it (`agentId`, `agentType`, `description`, `toolUseId`: the parent's `agent` call,
`background`, `model`, `status`, `startedAt`, `finishedAt`). A folder, not a `*.jsonl` in the
project folder: listings, the catalog and the real CLI see only `<sid>.jsonl` names there, so a
run is never taken for a session.

Reading never fails on one bad run: a run whose meta is missing or unreadable is still listed
(its transcript is the run) and the problem is one line in `warnings`; a file whose name is not
`agent-<id>.jsonl` with `[A-Za-z0-9_-]` ids is not a run.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..errors import CommandcodeError
from ..storage.regular import read_regular
from .files import SessionFiles
from .lock import lock_holder

SUBAGENTS = "subagents"
PREFIX = "agent-"
AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")
STATUSES = ("running", "completed", "failed", "killed", "max_turns", "interrupted")
_META_LIMIT = 1 << 20


def subagents_dir(files: SessionFiles) -> str:
    """`<project folder>/<sid>/subagents` of a session."""
    return os.path.join(files.folder, files.session_id, SUBAGENTS)


def run_files(files: SessionFiles, agent_id: str) -> SessionFiles:
    """The files of one run of `files`' session (`agent-<agent id>.jsonl` and its meta)."""
    if not AGENT_ID.fullmatch(agent_id):
        raise ValueError(f"not a sub-agent id: {agent_id!r}")
    return SessionFiles(subagents_dir(files), PREFIX + agent_id)


@dataclass(frozen=True)
class SubagentRun:
    """One sub-agent run of a session: who ran (`agent_type`, `description`), for which call of
    the parent (`tool_use_id`), how it ended (`status`: one of `STATUSES`, or None when not
    recorded), its transcript `path`, and its conversation (`messages`, in Command Code's
    message shape; filled by `with_messages=True` readers)."""

    agent_id: str
    path: str
    source: str = "commandcode"
    agent_type: str | None = None
    description: str | None = None
    tool_use_id: str | None = None
    background: bool = False
    model: str | None = None
    status: str | None = None
    started: str | None = None
    finished: str | None = None
    message_count: int = 0
    messages: tuple[dict[str, Any], ...] = ()

    def to_meta(self) -> dict[str, Any]:
        """The run's `agent-<id>.meta.json` keys (format §21; `run_from_meta` reads them back)."""
        return {"agentId": self.agent_id, "agentType": self.agent_type, "description": self.description,
                "toolUseId": self.tool_use_id, "background": self.background, "model": self.model,
                "status": self.status, "startedAt": self.started, "finishedAt": self.finished}

    def to_dict(self) -> dict[str, Any]:
        """The run as `--json` output and exports show it (messages left out)."""
        return {"agent_id": self.agent_id, "source": self.source, "path": self.path, "agent_type": self.agent_type,
                "description": self.description, "tool_use_id": self.tool_use_id, "background": self.background,
                "model": self.model, "status": self.status, "started": self.started, "finished": self.finished,
                "messages": self.message_count}


@dataclass
class SubagentRuns:
    """The runs of one session, in start order, and the problems met reading them."""

    runs: list[SubagentRun] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def by_tool_use(self) -> dict[str, list[SubagentRun]]:
        """The runs under each `agent` call of the parent (by its `tool_use` id)."""
        folded: dict[str, list[SubagentRun]] = {}
        for run in self.runs:
            if run.tool_use_id:
                folded.setdefault(run.tool_use_id, []).append(run)
        return folded


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def read_run_meta(path: str) -> dict[str, Any]:
    """A run's meta (no-follow, never blocks).

    Raises:
        OSError, ValueError: missing, unreadable, too big, or not a JSON object.
    """
    data = read_regular(path, limit=_META_LIMIT)
    if len(data) > _META_LIMIT:
        raise ValueError("over 1 MB")
    loaded = json.loads(data)
    if not isinstance(loaded, dict):
        raise ValueError("not a JSON object")
    return loaded


def _status(meta: dict[str, Any], transcript: str) -> str | None:
    status = _text(meta.get("status"))
    if status == "running" and lock_holder(Path(transcript)) is None:
        return "interrupted"  # its process is gone: no writer holds the transcript any more
    return status if status in STATUSES else None


def run_from_meta(agent_id: str, transcript: str, meta: dict[str, Any], *, source: str = "commandcode",
                  message_count: int = 0, messages: tuple[dict[str, Any], ...] = ()) -> SubagentRun:
    """A `SubagentRun` from a meta with the keys of format §21 (Claude Code's `.meta.json`
    uses the same `agentType`, `description`, `toolUseId`)."""
    return SubagentRun(
        agent_id=agent_id, path=transcript, source=source, agent_type=_text(meta.get("agentType")),
        description=_text(meta.get("description")), tool_use_id=_text(meta.get("toolUseId")),
        background=meta.get("background") is True, model=_text(meta.get("model")),
        status=_status(meta, transcript) if source == "commandcode" else _text(meta.get("status")),
        started=_text(meta.get("startedAt")), finished=_text(meta.get("finishedAt")),
        message_count=message_count, messages=messages)


def run_ids(files: SessionFiles) -> list[str]:
    """The agent ids of the runs stored beside a session (none when it has no folder)."""
    try:
        names = os.listdir(subagents_dir(files))
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = [name[len(PREFIX):-len(".jsonl")] for name in names
             if name.startswith(PREFIX) and name.endswith(".jsonl") and not name.startswith(".")]
    return sorted(agent_id for agent_id in found if AGENT_ID.fullmatch(agent_id))


def list_subagent_runs(files: SessionFiles, *, with_messages: bool = False) -> SubagentRuns:
    """Every run stored beside a session, oldest first (by `startedAt`, then id); with
    `with_messages`, each one's conversation (its context, as a resume would rebuild it)."""
    from .reader import open_session

    result = SubagentRuns()
    try:
        ids = run_ids(files)
    except OSError as error:  # the folder cannot be listed (a symlink loop, no permission): say so, show the rest
        result.warnings.append(f"sub-agent runs in {subagents_dir(files)} not read: {error.strerror or error}")
        return result
    for agent_id in ids:
        own = run_files(files, agent_id)
        transcript = os.fspath(own.transcript)
        meta: dict[str, Any] = {}
        try:
            meta = read_run_meta(os.fspath(own.meta))
        except (OSError, ValueError) as error:
            reason = getattr(error, "strerror", None) or error
            result.warnings.append(f"sub-agent {agent_id}: no readable {own.meta.name} ({reason})")
        count, messages = 0, cast("tuple[dict[str, Any], ...]", ())
        try:
            session = open_session(transcript, use_index=False)  # no index sidecar for a run (small, and no project slug)
            count = session.message_count
            if with_messages:
                messages = tuple(session.context().messages)
        except (OSError, ValueError, CommandcodeError) as error:  # a damaged run never hides the others
            reason = getattr(error, "strerror", None) or error
            result.warnings.append(f"sub-agent {agent_id}: cannot read {own.transcript.name}: {reason}")
        result.runs.append(run_from_meta(agent_id, transcript, meta, message_count=count, messages=messages))
    result.runs.sort(key=lambda run: (run.started or "", run.agent_id))
    return result
