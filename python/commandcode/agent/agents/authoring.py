"""Writing a new custom agent file (`/agents new`): `new_agent_file(...)` → its path.

The file is what the real CLI's `/agents` wizard saves and what `definitions.py` reads back: a
`---` front matter with `name`, `description` (double-quoted, so any text is valid YAML),
`tools` (`"*"` or a comma-separated list, omitted for none), and `model` when one is pinned,
then the system prompt as the body. A project agent goes into `.commandcode/agents/` of the
project root (the folder `registry.project_agent_dirs` reads last: the nearest one holding
`.git`, else the working folder), a user agent into `<data dir>/agents/`. The file is created
exclusively and fsynced: an existing file of that name is never replaced.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from ...errors import CommandcodeError
from ...storage.durable import create_new_file
from .definitions import ToolAccess, is_reserved, sanitize_name
from .registry import project_agent_dirs, user_agents_dir

# The tool sets the wizard offers, by the real CLI's categories (custom-agents.md).
TOOL_CHOICES: tuple[tuple[str, ToolAccess], ...] = (
    ("All tools", "*"),
    ("Read-only: read_file, read_directory, grep, glob", ("read_file", "read_directory", "grep", "glob")),
    ("Read and edit: read-only plus edit_file, write_file",
     ("read_file", "read_directory", "grep", "glob", "edit_file", "write_file")),
    ("Read, edit and run commands: also shell_command",
     ("read_file", "read_directory", "grep", "glob", "edit_file", "write_file", "shell_command")),
    ("No tools", ()),
)
_FILE_MODE = 0o644  # an agent file is meant to be read (and, in a project, committed)


@dataclass(frozen=True)
class NewAgent:
    """What `/agents new` asks for."""

    name: str
    description: str
    tools: ToolAccess
    prompt: str
    model: str | None = None


def check_name(name: str) -> None:
    """Refuses a name the real CLI would rename or ignore.

    Raises:
        CommandcodeError: the name is empty, has other characters than `[A-Za-z0-9_-]`, or is reserved.
    """
    if not name:
        raise CommandcodeError("an agent needs a name", hint="/agents new NAME [--user]")
    if sanitize_name(name) != name or len(name) > 64:
        raise CommandcodeError(f"{name!r} is not an agent name",
                               hint="use up to 64 letters, digits, '_' and '-' (e.g. code-reviewer)")
    if is_reserved(name):
        raise CommandcodeError(f"{name!r} is reserved for a built-in agent",
                               hint="pick another name (explore, plan, review and general are taken)")


def agents_folder(cwd: str | os.PathLike[str], *, user: bool) -> str:
    """Where a new agent goes: the user's folder, or the project root's `.commandcode/agents/`."""
    if user:
        return user_agents_dir()
    return project_agent_dirs(os.path.abspath(os.fspath(cwd)))[-1]


def agent_file_text(agent: NewAgent) -> str:
    """The Markdown file of `agent` (see the module docstring)."""
    lines = ["---", f"name: {agent.name}", f"description: {json.dumps(agent.description, ensure_ascii=False)}"]
    if agent.tools == "*":
        lines.append('tools: "*"')
    elif agent.tools:
        lines.append(f"tools: {', '.join(agent.tools)}")
    if agent.model:
        lines.append(f"model: {json.dumps(agent.model, ensure_ascii=False)}")
    lines.append("---")
    return "\n".join(lines) + "\n\n" + agent.prompt.strip() + "\n"


def refuse_existing(folder: str, name: str) -> str:
    """The path a new agent `name` gets in `folder`.

    Raises:
        CommandcodeError: something is there already (it is left as it was).
    """
    path = os.path.join(folder, name + ".md")
    if os.path.lexists(path):
        raise CommandcodeError(f"{path} exists: not overwritten", hint="edit that file, or pick another name")
    return path


def new_agent_file(folder: str, agent: NewAgent) -> str:
    """Creates `<folder>/<name>.md` for `agent` (the folder too) and returns its path.

    Raises:
        CommandcodeError: a bad name, or a file of that name exists (it is left as it was).
        OSError: the folder or file cannot be created (nothing half-written is left).
    """
    check_name(agent.name)
    path = refuse_existing(folder, agent.name)
    os.makedirs(folder, exist_ok=True)
    try:
        create_new_file(path, agent_file_text(agent).encode("utf-8"), mode=_FILE_MODE)
    except FileExistsError:  # created between the check and the write
        raise CommandcodeError(f"{path} exists: not overwritten", hint="edit that file, or pick another name") from None
    return path
