"""The agents a session can delegate to: `load_agents(cwd)` → `AgentRegistry`.

Where they come from, in the real CLI's (1.64.0) order, the **first** definition of a name
winning (`scanAllAgents`): the bundled three, then the user's folder (`<data dir>/agents/`, which
is `~/.commandcode/agents/` unless `$COMMANDCODE_HOME` moves the data dir), then the project's:
`<cwd>/.commandcode/agents/` and, when it differs, `<root>/.commandcode/agents/` where `<root>`
is the nearest folder at most ten levels up (never past the home folder) holding `.git`, else
`.commandcode`. So a user agent shadows a project agent of the same name, and no file can
replace a bundled agent (their names are reserved). Only `*.md` files are read, in name order;
one that cannot be read or whose front matter is not valid YAML is one warning line naming the
file, and the others still load. Loading is cheap enough to run again at every turn, as the
real CLI does.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field

from ...config.paths import data_dir
from ...storage.regular import read_regular
from .definitions import BUNDLED, AgentDefinition, Source, definition_from_file
from .frontmatter import FrontMatterError

MAX_AGENT_FILE = 1 << 20  # bytes; a bigger file is refused (it would all go into every request)
_WALK_LIMIT = 10


@dataclass
class AgentRegistry:
    """The agents by name (bundled first, then user, then project), the warning lines, and the
    file definitions that lost to an earlier one of the same name (`shadowed`, in load order)."""

    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    shadowed: list[AgentDefinition] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)

    def names(self) -> list[str]:
        return list(self.agents)

    def by_source(self, source: Source) -> list[AgentDefinition]:
        return [agent for agent in self.agents.values() if agent.source == source]


def user_agents_dir() -> str:
    return os.path.join(os.fspath(data_dir()), "agents")


def _walk_up(cwd: str, marker: str) -> str | None:
    home = os.path.expanduser("~")
    folder = cwd
    for _ in range(_WALK_LIMIT):
        if home and folder == home:
            return None
        if os.path.exists(os.path.join(folder, marker)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def project_agent_dirs(cwd: str) -> list[str]:
    """The project's agent folders, the nearer first (the real CLI's `projectAgentDirs`)."""
    here = os.path.join(cwd, ".commandcode", "agents")
    root = _walk_up(cwd, ".git") or _walk_up(cwd, ".commandcode")
    rooted = os.path.join(root, ".commandcode", "agents") if root else here
    return [here, rooted] if cwd != os.path.expanduser("~") and here != rooted else [rooted]


def scan_agents_dir(folder: str, source: Source, warnings: list[str]) -> list[AgentDefinition]:
    """The agents defined by the `*.md` files of one folder (a missing folder has none, nor does a
    path the system cannot name: a working directory deeper than PATH_MAX, or under a file)."""
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(".md"))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            return []
        warnings.append(f"agents in {folder} not loaded: {error.strerror or error}")
        return []
    found: list[AgentDefinition] = []
    for name in names:
        path = os.path.join(folder, name)
        try:
            data = read_regular(path, limit=MAX_AGENT_FILE, follow=True)
            if len(data) > MAX_AGENT_FILE:
                raise ValueError(f"over {MAX_AGENT_FILE // 1024} KB")
            definition = definition_from_file(path, data.decode("utf-8"), source, warnings)
        except FileNotFoundError:
            continue  # removed while we listed the folder
        except OSError as error:
            warnings.append(f"agent file {path} ignored: {error.strerror or error}")
            continue
        except UnicodeDecodeError:
            warnings.append(f"agent file {path} ignored: not UTF-8 text")
            continue
        except (FrontMatterError, ValueError) as error:
            warnings.append(f"agent file {path} ignored: {error}")
            continue
        if definition is not None:
            found.append(definition)
    return found


def load_agents(cwd: str | os.PathLike[str]) -> AgentRegistry:
    """Every agent for a session started in `cwd` (see the module docstring)."""
    registry = AgentRegistry()
    folder = os.path.abspath(os.fspath(cwd))
    candidates = list(BUNDLED)
    candidates += scan_agents_dir(user_agents_dir(), "user", registry.warnings)
    for directory in project_agent_dirs(folder):
        candidates += scan_agents_dir(directory, "project", registry.warnings)
    for definition in candidates:
        if registry.agents.setdefault(definition.name, definition) is not definition:
            registry.shadowed.append(definition)
    return registry
