"""The sub-agent runs of a session as `sessions show` gives them: `session_runs(session)` (ours,
stored beside the session, format §21, or a Claude Code session's subagents, in the same
`SubagentRuns` shape) and `run_lines(runs)`: a block per `agent` call of the parent holding each
run it started (the agent, its description, status, model, file) and one line per message of
the run's conversation."""

from __future__ import annotations

from typing import Any

from ..sessions.subagent_runs import SubagentRun, SubagentRuns

_PREVIEW = 100


def session_runs(session: Any) -> SubagentRuns:
    """The runs of `session` (a Command Code or Claude Code session; others have none), with
    their conversations."""
    from ..sessions.reader import Session

    if isinstance(session, Session):
        from ..sessions.files import SessionFiles
        from ..sessions.subagent_runs import list_subagent_runs

        return list_subagent_runs(SessionFiles.for_transcript(session.path), with_messages=True)
    from ..interop.claude_code import ClaudeSession

    if isinstance(session, ClaudeSession):
        from ..interop.claude_subagents import claude_subagent_runs

        return claude_subagent_runs(session)
    return SubagentRuns()


def _preview(message: dict[str, Any]) -> str:
    """A message on one line: its text, else the kinds of its blocks (a tool call by name)."""
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    texts: list[str] = []
    kinds: list[str] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            texts.append(str(block["text"]))
        elif block.get("type") == "tool_use":
            kinds.append(f"tool call {block.get('name', '?')}")
        elif block.get("type") == "tool_result":
            kinds.append("tool result" + (" (error)" if block.get("is_error") else ""))
        elif block.get("type"):
            kinds.append(str(block["type"]))
    line = " ".join(" ".join(texts).split()) or ", ".join(kinds) or "(empty)"
    if texts and kinds:
        line += f" [{', '.join(kinds)}]"
    return line if len(line) <= _PREVIEW else line[:_PREVIEW - 1] + "…"


def _run_lines(run: SubagentRun, indent: str) -> list[str]:
    head = f"{indent}sub-agent {run.agent_type or 'agent'}: {run.description or '(no description)'}"
    details = [run.status or "status unknown", f"{run.message_count} message{'s' if run.message_count != 1 else ''}"]
    if run.background:
        details.append("background")
    if run.model:
        details.append(run.model)
    lines = [f"{head} · {' · '.join(details)}", f"{indent}  {run.agent_id} {run.path}"]
    lines += [f"{indent}  {message.get('role', '?')}: {_preview(message)}" for message in run.messages]
    return lines


def run_lines(runs: SubagentRuns) -> list[str]:
    """The text block of `sessions show` (empty when the session has no runs)."""
    if not runs.runs:
        return []
    lines = [f"sub-agent runs: {len(runs.runs)}"]
    for tool_use_id, folded in runs.by_tool_use().items():
        lines.append(f"  agent call {tool_use_id}:")
        for run in folded:
            lines += _run_lines(run, "    ")
    loose = [run for run in runs.runs if not run.tool_use_id]
    if loose:
        lines.append("  not tied to an agent call:")
        for run in loose:
            lines += _run_lines(run, "    ")
    return lines
