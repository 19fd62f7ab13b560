"""Claude Code's subagents as sub-agent runs: `claude_subagent_runs(session)` gives the
`SubagentRuns` shape our own runs have (sessions/subagent_runs.py), so one view folds both under
the parent's call.

Claude Code 2.1.332 writes each subagent to `<project>/<sid>/subagents/agent-<agent id>.jsonl`
(every entry `isSidechain: true`, with the parent's `sessionId` and the run's `agentId`) and
`agent-<agent id>.meta.json` (`agentType`, `description`, `toolUseId` of the parent's `Agent`
call, `model`, `requestShape: "background"` for a detached run, `finished: true` once it ended).
`ClaudeSession` reads them (claude_code.py); this maps them (`claude_run`: one of them, which
`import claude` also writes as a run of ours, claude_runs.py).
"""

from __future__ import annotations

from typing import Any

from ..sessions.subagent_runs import SubagentRun, SubagentRuns, run_from_meta
from .claude_code import ClaudeSession, Subagent


def claude_run(subagent: Subagent) -> SubagentRun:
    """One Claude Code subagent as a run (`status` `completed` once Claude Code marked it
    finished, else None; started and finished: its first and last entries' times)."""
    meta: dict[str, Any] = dict(subagent.meta)
    meta["background"] = meta.get("requestShape") == "background"
    meta["status"] = "completed" if meta.get("finished") is True else None
    session = subagent.session
    timestamps = sorted(line.value["timestamp"] for line in session.lines
                        if isinstance(line.value.get("timestamp"), str)) if session else []
    if timestamps:
        meta["startedAt"], meta["finishedAt"] = timestamps[0], timestamps[-1] if meta["status"] else None
    messages = tuple(session.messages) if session else ()
    return run_from_meta(subagent.agent_id, str(subagent.path), meta, source="claude",
                         message_count=session.message_count if session else 0, messages=messages)


def claude_subagent_runs(session: ClaudeSession) -> SubagentRuns:
    """The subagents of a Claude Code session, oldest first, with their conversations; the
    reader's subagent warnings (a missing file, an unreadable meta) come along."""
    runs = SubagentRuns(runs=[claude_run(subagent) for subagent in session.subagents],
                        warnings=[warning for warning in session.warnings if warning.startswith("subagent ")])
    runs.runs.sort(key=lambda run: (run.started or "", run.agent_id))
    return runs
