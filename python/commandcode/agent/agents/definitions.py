"""What one agent is: `AgentDefinition`, the three bundled agents, and reading one agent file's
front matter into a definition with the real CLI's (1.64.0) rules for every field.

Fields (custom-agents.md, and `scanAgentsDir` in its bundle): `name` (default: the file name
without `.md`; characters outside `[A-Za-z0-9_-]` become `_`; a reserved name — `explore`,
`plan`, `review`, `general`, any case — makes the file ignored), `description`, `tools` (`*`, a
comma- or space-separated list or a YAML list; omitted: no tools), `disallowedTools` (same
format, deny beats allow, `*` denies all), `model` (`inherit` or omitted: the session's),
`reasoningEffort` (`low|medium|high|xhigh|max`), `maxTurns` (a positive integer, default 100),
`permissionMode` (`default`, `accept-edits`, `yolo`, `plan`, `dont-ask`, and the aliases the
real CLI accepts), `background` and `showOutput` (`true`/`yes`/`1`). An invalid
`reasoningEffort`, `maxTurns` or `permissionMode` is dropped with the real CLI's warning line
(`Ignoring invalid maxTurns "abc" in <path>`) and the file still loads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .frontmatter import Value, parse_front_matter

ToolAccess = Literal["*"] | tuple[str, ...]
Source = Literal["bundled", "user", "project"]

RESERVED_NAMES = ("explore", "plan", "review", "general")
DEFAULT_MAX_TURNS = 100
INHERIT = "inherit"
REASONING_EFFORTS = ("low", "medium", "high", "xhigh", "max")
# The real CLI's canonical permission modes, and the other spellings it accepts (`Lr`, `Dr`).
PERMISSION_MODES = ("default", "auto-accept", "plan", "bypass", "dont-ask")
PERMISSION_ALIASES = {"standard": "default", "manual": "default", "acceptedits": "auto-accept",
                      "accept-edits": "auto-accept", "dontask": "dont-ask", "yolo": "bypass",
                      "bypasspermissions": "bypass", "bypass-permissions": "bypass"}
# The same modes in this program's names (agent/permission_modes.py); `dont-ask` has none yet.
OUR_PERMISSION_MODES = {"default": "default", "auto-accept": "acceptEdits", "plan": "plan",
                        "bypass": "bypassPermissions"}


@dataclass(frozen=True)
class AgentDefinition:
    """One agent: bundled (`path` empty) or read from a Markdown file (`path` names it)."""

    name: str
    description: str
    system_prompt: str
    tools: ToolAccess
    source: Source
    path: str = ""
    disallowed_tools: tuple[str, ...] | None = None
    model: str | None = None
    reasoning_effort: str | None = None
    max_turns: int | None = None
    permission_mode: str | None = None
    background: bool = False
    show_output: bool = False

    @property
    def turn_limit(self) -> int:
        """The cap on the agent's loop (`maxTurns`, else 100)."""
        return self.max_turns if self.max_turns is not None else DEFAULT_MAX_TURNS

    @property
    def pinned_model(self) -> str | None:
        """The model this agent always uses, or None to follow the session's (`inherit`)."""
        model = (self.model or "").strip()
        return None if not model or model.lower() == INHERIT else model

    def run_permission_mode(self, parent_mode: str) -> str:
        """The mode a run starts in (real-CLI names): a parent in `plan` or `bypass` wins,
        else the agent's own mode, else the parent's."""
        if parent_mode in ("plan", "bypass"):
            return parent_mode
        return self.permission_mode or parent_mode


_GENERAL_PROMPT = """You are a general-purpose autonomous agent. You receive one self-contained task, complete it fully, and report back once at the end.

INSTRUCTIONS:
1. Read the task carefully and identify the concrete deliverable it asks for.
2. Work autonomously — you cannot ask follow-up questions. Make reasonable assumptions and state them in your final report.
3. Use the minimum set of tool calls that gets the task done correctly; prefer targeted searches and reads over broad scans.
4. Stay inside the current workspace. Do not read sibling projects, parent directories, or unrelated paths.
5. If part of the task is impossible, finish the rest and clearly report what was skipped and why.

RESPONSE FORMAT:
- Your final message IS the result handed back to the caller — make it complete and self-contained.
- Lead with the outcome, then supporting detail. Include relevant file paths and code references.
- Do not narrate your process; report findings and results."""

_EXPLORE_PROMPT = """You are a codebase explorer. Your prompt will specify depth level and what information is needed.

TOOLS AVAILABLE:
- glob: Find files by patterns
- grep: Search code for keywords/patterns
- read_file: Read one file, or many at once by passing an array of paths/glob patterns
- read_directory: List directory contents

DEPTH LEVELS:
- quick: 1-2 files, answer the specific question only
- medium: 3-5 files, understand the main component and context
- thorough: 10+ files, comprehensive understanding

INSTRUCTIONS:
1. Look for "Depth: [level]" in the prompt (usually on line 2)
2. Identify exactly what information is needed (specified in the prompt)
3. Use only the file operations needed to get that information
4. Stop when you have the requested information
5. Stay inside the current workspace. Do not read sibling projects, parent directories, or unrelated paths to draw inspiration — even if structurally similar code exists nearby. The user's project is its own context.

If no depth level specified, default to "quick".

RESPONSE FORMAT:
- Provide exactly what was requested
- Include relevant file paths and code sections
- Match your depth to the specified level
- Stop when done - don't over-explore"""

_PLAN_PROMPT = """You are an implementation planner and software architect. You receive findings from exploration and design the implementation approach.

TOOLS AVAILABLE:
- read_file: Read one file, or many at once by passing an array of paths/glob patterns

YOUR ROLE:
1. Synthesize findings from exploration agents
2. Identify possible implementation approaches
3. Consider architectural trade-offs and implications
4. Determine what clarifications are needed from the user
5. Design the optimal approach based on existing patterns

DESIGN PROCESS:
1. Review exploration findings to understand current architecture
2. Identify 2-4 possible approaches for the task
3. For each approach, consider:
   - How well it fits existing patterns
   - Complexity vs benefits
   - Risks and potential issues
   - What needs to be modified
4. Determine if user clarification is needed (approach choice, scope, preferences)
5. Recommend an approach with clear rationale

OUTPUT FORMAT:
Provide a structured analysis:
- **Current Architecture**: Summary of relevant findings
- **Possible Approaches**: 2-4 options with pros/cons
- **Recommended Approach**: Your suggestion with rationale
- **Clarifications Needed**: Questions for the user (if any)
- **Implementation Outline**: High-level steps for the recommended approach

Be concise but thorough. Focus on actionable design decisions."""

# The real CLI's bundled agents, word for word (`Hw` in its bundle). Its docs list Explore's
# tools as read_file, read_directory, grep; its code also grants glob.
BUNDLED = (
    AgentDefinition("general", "General-purpose agent for researching complex questions and executing multi-step "
                    "tasks autonomously. The default when no specialized agent fits", _GENERAL_PROMPT, "*", "bundled"),
    AgentDefinition("explore", "Use this for codebase exploration, search, or understanding tasks that require "
                    "multiple file operations", _EXPLORE_PROMPT, ("glob", "grep", "read_file", "read_directory"),
                    "bundled"),
    AgentDefinition("plan", "Use this to design implementation approaches by synthesizing exploration findings and "
                    "considering architectural trade-offs", _PLAN_PROMPT, ("read_file",), "bundled"),
)


def sanitize_name(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


def is_reserved(name: str) -> bool:
    return name.lower() in RESERVED_NAMES


def parse_tool_access(value: Value | None) -> ToolAccess:
    """`tools` as the real CLI reads it (`parseToolAccess`): `*`, or the names in order."""
    if value is None:
        return ()
    if isinstance(value, list):
        return tuple(item.strip() for item in value if item.strip())
    text = value.strip()
    if text in ("*", '"*"'):
        return "*"
    if not text:
        return ()
    parts = text.split(",") if "," in text else text.split()
    return tuple(part.strip() for part in parts if part.strip())


def _warn(warnings: list[str], field: str, value: str, path: str) -> None:
    warnings.append(f"Ignoring invalid {field} {_js_quote(value)} in {path}")


def _js_quote(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _text(value: Value | None) -> str | None:
    return value if isinstance(value, str) else None


def normalize_permission_mode(text: str) -> str | None:
    lowered = text.strip().lower()
    return lowered if lowered in PERMISSION_MODES else PERMISSION_ALIASES.get(lowered)


def definition_from_file(path: str, text: str, source: Source, warnings: list[str]) -> AgentDefinition | None:
    """The agent an agent file defines (None: its name is reserved, so the file is ignored);
    invalid optional fields add a warning line each and are dropped.

    Raises:
        FrontMatterError: the front matter is not valid YAML.
    """
    fields, body = parse_front_matter(text)
    file_name = path.rsplit("/", 1)[-1]
    name = sanitize_name(_text(fields.get("name")) or file_name[:-3])
    if is_reserved(name):
        return None
    effort = (_text(fields.get("reasoningEffort")) or "").strip().lower() or None
    if effort is not None and effort not in REASONING_EFFORTS:
        _warn(warnings, "reasoningEffort", effort, path)
        effort = None
    turns_text = (_text(fields.get("maxTurns")) or "").strip()
    max_turns = int(turns_text) if re.fullmatch(r"\+?\d+", turns_text) and int(turns_text) > 0 else None
    if turns_text and max_turns is None:
        _warn(warnings, "maxTurns", turns_text, path)
    mode_text = (_text(fields.get("permissionMode")) or "").strip()
    mode = normalize_permission_mode(mode_text) if mode_text else None
    if mode_text and mode is None:
        _warn(warnings, "permissionMode", mode_text, path)
    denied = fields.get("disallowedTools")
    deny_access = parse_tool_access(denied) if denied is not None else None
    return AgentDefinition(
        name=name, description=_text(fields.get("description")) or "", system_prompt=body,
        tools=parse_tool_access(fields.get("tools")), source=source, path=path,
        disallowed_tools=None if deny_access is None else ("*",) if deny_access == "*" else deny_access or None,
        model=_text(fields.get("model")) or None, reasoning_effort=effort, max_turns=max_turns,
        permission_mode=mode, background=_flag(fields.get("background")), show_output=_flag(fields.get("showOutput")))


def _flag(value: Value | None) -> bool:
    return isinstance(value, str) and value.strip().lower() in ("true", "yes", "1")
