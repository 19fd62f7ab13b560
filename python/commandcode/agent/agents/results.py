"""The texts a sub-agent run gives back to the parent's model, word for word the real CLI's
(1.64.0: `formatSubagentOutcome`, the background launch text, `describeBackgroundAgent`, and
`agent_output`'s answers), so the parent's transcript records what the real CLI's would.

A foreground `agent` call's tool result is `outcome_text(...)`: a note when the run stopped
early, the final reply (or a placeholder), and a `<usage>` trailer; a background call's is
`launched_text(agent_id)`; `agent_output` answers with `status_text(...)`, `list_text(...)`,
`kill_sent_text(...)`, and `unknown_agent_text(...)` as a tool error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

STOP_NOTES = {
    "max_turns": "[sub-agent stopped early: hit its turn limit before finishing — output may be incomplete]",
    "interrupted": "[sub-agent interrupted before finishing]",
    "permission_denied": "[sub-agent stopped early: a required tool permission was denied]",
    "run_error": "[sub-agent stopped early: the run errored]",
}
NO_OUTPUT = "(Sub-agent completed but returned no output.)"


@dataclass(frozen=True)
class Outcome:
    """How a run ended: its final reply, why it stopped (`end_turn`, or a key of `STOP_NOTES`),
    tokens (input, output, cache read, cache write), tool calls made, model turns, time."""

    final_text: str
    stop_reason: str
    tokens: tuple[int, int, int, int]
    tool_uses: int
    turns: int
    duration_ms: int


@dataclass(frozen=True)
class BackgroundRecord:
    """A background run as `agent_output` describes it (`status`: running, completed, killed,
    failed)."""

    agent_id: str
    subagent_type: str
    description: str
    status: str
    running_ms: int = 0
    outcome: Outcome | None = None
    error: str | None = None


def outcome_text(outcome: Outcome) -> str:
    """The tool result of a finished run."""
    usage = (f"<usage>total_tokens: {sum(outcome.tokens)}\ntool_uses: {outcome.tool_uses}\nturns: {outcome.turns}\n"
             f"duration_ms: {outcome.duration_ms}</usage>")
    parts = [STOP_NOTES.get(outcome.stop_reason, ""),
             outcome.final_text if outcome.final_text.strip() else NO_OUTPUT, usage]
    return "\n\n".join(part for part in parts if part)


def launched_text(agent_id: str) -> str:
    """The tool result of an `agent` call run in the background."""
    return (f"Background agent launched.\nagent_id: {agent_id}\nThe agent is working in the background — do not "
            "duplicate its work. Use the agent_output tool with this agent_id to wait for or check its result.")


def status_text(record: BackgroundRecord) -> str:
    """`agent_output`'s description of one background run (its result once it has one)."""
    head = (f"agent_id: {record.agent_id}\nagent: {record.subagent_type}\ndescription: {record.description}\n"
            f"status: {record.status}")
    if record.status == "running":
        return f"{head}\nrunning for {record.running_ms}ms"
    if record.outcome is not None:
        return f"{head}\n\n{outcome_text(record.outcome)}"
    if record.error:
        return f"{head}\nerror: {record.error}"
    return head


def list_text(records: Sequence[BackgroundRecord]) -> str:
    """`agent_output` without an `agent_id`: one line per background run."""
    if not records:
        return "No background agents."
    return "\n".join(f"{record.agent_id} [{record.status}] {record.subagent_type}: {record.description}"
                     for record in records)


def kill_sent_text(agent_id: str) -> str:
    return f"Kill signal sent to {agent_id}."


def unknown_agent_text(agent_id: str) -> str:
    """The tool error for an `agent_id` no run has."""
    return f"Unknown background agent: {agent_id}"


def unknown_type_text(subagent_type: str) -> str:
    """The tool error for a `subagent_type` no agent is registered under."""
    return f"Unknown subagent_type: {subagent_type}"
