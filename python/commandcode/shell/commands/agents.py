"""`/agents`: the agents a session can delegate to (`agent/agents/`): list them, show one, create one.

`/agents` lists the user's and the project's custom agents (each with its file) and the three
built-in ones, then the warning lines of files that did not load and a note for each file
whose agent another file of the same name hides; `/agents NAME` shows one
agent's fields and its system prompt; `/agents new NAME [--user]` asks for a description, a
tool set and a prompt, and writes `NAME.md` into the project's `.commandcode/agents/` (or, with
`--user`, `~/.commandcode/agents/`), never over an existing file.
"""

from __future__ import annotations

from ...agent.agents.authoring import TOOL_CHOICES, NewAgent, agents_folder, check_name, new_agent_file, refuse_existing
from ...agent.agents.definitions import AgentDefinition, Source
from ...agent.agents.registry import AgentRegistry, load_agents
from ...errors import CommandcodeError
from ..slash import Shell, SlashCommand

_USAGE = "/agents, /agents NAME, /agents new NAME [--user]"
_SECTIONS: tuple[tuple[Source, str], ...] = (("user", "User agents (~/.commandcode/agents/)"), ("project", "Project agents (.commandcode/agents/)"),
             ("bundled", "Default agents (read-only)"))
_DEFAULT_PROMPT = "You are a focused assistant. Complete the task you are given and report the outcome."


def _one_line(text: str, width: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[:width - 1] + "…"


def _tools(tools: object) -> str:
    if tools == "*":
        return "all tools"
    return ", ".join(tools) if isinstance(tools, tuple) and tools else "none"


def _list(shell: Shell, registry: AgentRegistry) -> None:
    custom = len(registry.by_source("user")) + len(registry.by_source("project"))
    shell.print(f"Agents ({custom} custom)" if custom else "Agents (no custom agents)")
    for source, title in _SECTIONS:
        agents = registry.by_source(source)
        if not agents:
            continue
        shell.print("")
        shell.print(f"  {title}")
        for agent in agents:
            shell.print(f"    {agent.name}  {_one_line(agent.description) or '(no description)'}")
            if agent.path:
                shell.print(f"      {agent.path}")
    for warning in registry.warnings:
        shell.print(f"warning: {warning}")
    for hidden in registry.shadowed:
        winner = registry.agents[hidden.name]
        shell.print(f"note: {hidden.path} is not used: {winner.path or 'the built-in agent'} defines "
                    f"{hidden.name} first")
    shell.notice("/agents NAME shows one; /agents new NAME [--user] creates one")


def _show(shell: Shell, agent: AgentDefinition) -> None:
    fields = [("name", agent.name), ("source", agent.source), ("file", agent.path or "(built in)"),
              ("description", agent.description or "(none)"), ("tools", _tools(agent.tools))]
    if agent.disallowed_tools:
        fields.append(("disallowedTools", ", ".join(agent.disallowed_tools)))
    fields.append(("model", agent.model or "inherit"))
    fields += [(label, str(value)) for label, value in (
        ("reasoningEffort", agent.reasoning_effort), ("maxTurns", agent.max_turns),
        ("permissionMode", agent.permission_mode)) if value is not None]
    fields += [(label, "true") for label, value in (("background", agent.background),
                                                    ("showOutput", agent.show_output)) if value]
    for label, value in fields:
        shell.print(f"{label}: {value}")
    shell.print("")
    shell.print(agent.system_prompt or "(no system prompt)")


def _create(shell: Shell, registry: AgentRegistry, words: list[str]) -> None:
    user = "--user" in words
    rest = [word for word in words if word not in ("--user", "--project")]
    if len(rest) != 1 or ("--project" in words and user):
        raise CommandcodeError("usage: /agents new NAME [--user]", hint="NAME like code-reviewer; --user: for every project")
    name = rest[0]
    check_name(name)
    folder = agents_folder(shell.cwd, user=user)
    refuse_existing(folder, name)  # before any question; the write checks again
    existing = registry.get(name)
    description = shell.ask_text(f"Description of {name} (when should it be used?)")
    if description is None:
        shell.notice("cancelled: no agent written")
        return
    choice = shell.choose("Tools", [label for label, _ in TOOL_CHOICES], default=1)
    if choice is None:
        shell.notice("cancelled: no agent written")
        return
    prompt = shell.ask_text("System prompt", default=_DEFAULT_PROMPT)
    if prompt is None:
        shell.notice("cancelled: no agent written")
        return
    path = new_agent_file(folder, NewAgent(name, description.strip(), TOOL_CHOICES[choice][1],
                                           prompt.strip() or _DEFAULT_PROMPT))
    shell.print(f"Created agent {name}: {path}")
    if existing is not None and existing.source == "user" and not user:
        shell.print(f"warning: the user agent {existing.path} has the same name and wins over this one")
    elif existing is not None and user:
        shell.print(f"note: this one wins over {existing.path} (user agents load first)")
    shell.notice("it is used from the next turn; edit the file to refine it")


def run(shell: Shell, args: str) -> None:
    words = args.split()
    registry = load_agents(shell.cwd)
    if not words:
        _list(shell, registry)
    elif words[0] == "new":
        _create(shell, registry, words[1:])
    elif len(words) == 1:
        agent = registry.get(words[0]) or registry.get(words[0].lower())
        if agent is None:
            raise CommandcodeError(f"no agent named {words[0]!r}", hint="/agents lists them")
        _show(shell, agent)
    else:
        raise CommandcodeError(f"usage: {_USAGE}", hint="/agents NAME takes one name")


def complete(shell: Shell, prefix: str) -> list[str]:
    if " " in prefix:
        return []
    return [name for name in ("new", *load_agents(shell.cwd).names()) if name.startswith(prefix)]


COMMANDS = [SlashCommand("agents", run, "List, show or create the agents a session can delegate to",
                         help=f"{_USAGE}: the built-in agents (general, explore, plan) and custom ones from "
                              ".commandcode/agents/ (this project) and ~/.commandcode/agents/ (every project), "
                              "with the warning lines of files that did not load; one agent's fields and "
                              "prompt; a new agent file (description, tools and prompt asked for), never "
                              "over an existing file.",
                         complete=complete)]
