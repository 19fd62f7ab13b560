"""Which tools a sub-agent gets: `resolve_tools(definition, available)` and the check that turns
a custom agent naming a tool that exists nowhere into a tool error the model sees.

The real CLI (1.64.0, `resolveSubagentTools`): the spawn tools `agent` and `agent_output` are
never granted; `disallowedTools` is applied first (`*` denies everything; a display name such as
`Read File` counts as `read_file`); `tools: "*"` grants every remaining tool; a list grants
those it names, in its order, each once, and silently drops a name it has no tool for. Here a
name this program does not provide but the real CLI does (`grep`, `glob`, `web_fetch`, …) is
dropped the same way (the agent file is shared with the real CLI), the real CLI's
`shell_command` is our `bash`, and a name that is neither — a typo, a tool of neither
program — is `unknown`: `tool_error()` is the message a run of that agent returns instead of
starting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..tool_specs import SPAWN_TOOL_NAMES
from .definitions import AgentDefinition

SPAWN_TOOLS = frozenset(SPAWN_TOOL_NAMES)
# Tool ids of the real CLI 1.64.0 (its `SS` and `wS` lists): names an agent file may grant.
REAL_CLI_TOOLS = frozenset({
    "read_file", "edit_file", "read_directory", "write_file", "grep", "glob", "shell_command", "powershell",
    "shell_output", "monitor_command", "monitor_events", "shell_tasks", "cron_create", "cron_list", "cron_delete",
    "schedule_wakeup", "todo_write", "task_create", "task_update", "task_list", "task_get", "task_output",
    "task_stop", "ask_user_question", "run_command", "kill_shell", "sleep", "exit_plan_mode", "enter_plan_mode",
    "plan_review", "enter_worktree", "exit_worktree", "get_diagnostics", "taste", "web_search", "web_fetch",
    "vision", "agent", "agent_output", "activate_skill", "bash_output"})
ALIASES = {"shell_command": "bash", "bash_output": "shell_output"}


@dataclass(frozen=True)
class ToolGrant:
    """The tools a run gets (`granted`, in order), the names dropped because this program has
    no such tool (`unavailable`), and the names no program knows (`unknown`)."""

    granted: tuple[str, ...]
    unavailable: tuple[str, ...]
    unknown: tuple[str, ...]


def _display_name(tool: str) -> str:
    return " ".join(part[:1].upper() + part[1:] for part in tool.replace("_", " ").split())


def _canonical(name: str, available: Sequence[str]) -> str:
    by_display = {_display_name(tool): tool for tool in (*available, *REAL_CLI_TOOLS)}
    name = by_display.get(name, name)
    return ALIASES.get(name, name) if name not in available else name


def resolve_tools(definition: AgentDefinition, available: Sequence[str]) -> ToolGrant:
    """The tools `definition` gets out of `available` (this program's tool names)."""
    offered = [tool for tool in available if tool not in SPAWN_TOOLS]
    denied_names = definition.disallowed_tools or ()
    if "*" in denied_names:
        return ToolGrant((), (), ())
    denied = {_canonical(name, offered) for name in denied_names}
    offered = [tool for tool in offered if tool not in denied]
    if definition.tools == "*":
        return ToolGrant(tuple(offered), (), ())
    granted: list[str] = []
    unavailable: list[str] = []
    unknown: list[str] = []
    for name in definition.tools:
        tool = _canonical(name, offered)
        if tool in offered:
            if tool not in granted:
                granted.append(tool)
        elif tool in denied or name in SPAWN_TOOLS or tool in REAL_CLI_TOOLS or name in REAL_CLI_TOOLS \
                or tool in available:
            unavailable.append(name)
        else:
            unknown.append(name)
    return ToolGrant(tuple(granted), tuple(unavailable), tuple(unknown))


def tool_error(definition: AgentDefinition, grant: ToolGrant) -> str | None:
    """The tool error a run of `definition` returns when its file names tools that exist
    nowhere (None: it may run)."""
    if not grant.unknown:
        return None
    names = ", ".join(grant.unknown)
    where = f" ({definition.path})" if definition.path else ""
    plural = "s" if len(grant.unknown) > 1 else ""
    return (f'Sub-agent "{definition.name}"{where} names unknown tool{plural} {names}: fix its `tools:` line '
            f"(known tools include read_file, write_file, edit_file, shell_command) and call the agent again.")
