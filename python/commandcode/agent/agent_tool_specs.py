"""The `agent` and `agent_output` tools as a model is told about them, in tool_specs.py's shape
(name, description, JSON Schema of the input), word for word the real CLI's (1.64.0:
`createAgentTool`, `buildAgentToolDescription`, `createAgentOutputTool`).

`agent`'s description lists the registered agents and its `subagent_type` enum is their names,
rebuilt from the registry each time the spec is asked for (the real CLI recomputes it on every
schema read, so an agent file added mid-session is callable at once). Not yet among the specs
providers send: the turn runner registers them when it runs sub-agents.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .agents.definitions import AgentDefinition

AGENT_TOOL = "agent"
AGENT_OUTPUT_TOOL = "agent_output"


def agent_tool_description(definitions: Sequence[AgentDefinition]) -> str:
    """The `agent` tool's description: the rules, then `- name: description (model: m)` per agent."""
    lines = []
    for definition in definitions:
        model = (definition.model or "").strip()
        pinned = f" (model: {model})" if model and model.lower() != "inherit" else ""
        description = definition.description.strip()
        lines.append(f"- {definition.name}: {description}{pinned}" if description else f"- {definition.name}{pinned}")
    return "\n".join([
        "Delegate a task to a specialized sub-agent that runs autonomously and returns a single final result.",
        "Choose the sub-agent whose purpose best matches the task and pass it a complete, self-contained prompt.",
        "Launch independent tasks concurrently by emitting multiple task calls in one turn.",
        "Set run_in_background: true for long tasks you do not need before continuing — collect results later "
        "with the agent_output tool.",
        "",
        "Available agents (subagent_type):\n" + "\n".join(lines) if lines else "No sub-agents are currently available.",
    ])


def agent_tool_spec(definitions: Sequence[AgentDefinition], *, background: bool = True) -> dict[str, Any]:
    """The `agent` spec for these agents (`background`: offer `run_in_background`)."""
    has_general = any(definition.name == "general" for definition in definitions)
    properties: dict[str, Any] = {
        "description": {"type": "string", "description": "A short (3-5 word) label for this task, shown to the user "
                                                         "while the sub-agent works."},
        "subagent_type": {"type": "string", "enum": [definition.name for definition in definitions], "description": (
            "Which sub-agent to run — pick the one whose purpose matches the task. Omit to use 'general'."
            if has_general else "Which sub-agent to run. Must be one of the available agents listed in this tool "
                                "description — pick the one whose purpose matches the task.")},
        "prompt": {"type": "string", "description": "The full, self-contained task for the sub-agent. It runs "
                   "autonomously in its own context and cannot ask follow-ups, so include every detail it needs and "
                   "state exactly what to return."},
        "model": {"type": "string", "description": "Optional model override for this one run. Omit to use the agent's "
                  "configured model (its frontmatter `model:`, else the session model). Only set this when the user "
                  "explicitly asked for a specific model."},
    }
    if background:
        properties["run_in_background"] = {"type": "boolean", "description": "Run the sub-agent in the background and "
                                           "return immediately with an agent_id. Collect the result later with the "
                                           "agent_output tool."}
    required = ["description", "prompt"] if has_general else ["description", "subagent_type", "prompt"]
    return {"name": AGENT_TOOL, "description": agent_tool_description(definitions),
            "input_schema": {"type": "object", "properties": properties, "required": required}}


AGENT_OUTPUT_SPEC: dict[str, Any] = {
    "name": AGENT_OUTPUT_TOOL,
    "description": "Retrieve results from background sub-agents launched with the agent tool. Default action 'wait' "
                   "blocks until the agent finishes and returns its result; 'status' returns the current state "
                   "immediately; 'kill' interrupts a running agent. Omit agent_id to list every background agent and "
                   "its status.",
    "input_schema": {"type": "object", "properties": {
        "agent_id": {"type": "string", "description": "The agent_id returned when the task was launched. Omit to list "
                                                      "all background agents."},
        "action": {"type": "string", "enum": ["wait", "status", "kill"],
                   "description": "What to do: 'wait' (default) blocks until completion and returns the result; "
                                  "'status' peeks without blocking; 'kill' interrupts the agent."}},
        "required": []},
}
