"""Who may run which tool call: Claude Code's permission rules and modes, and the question to
the user when nobody said.

Rules come from the settings layers (`permissions.allow`, `permissions.ask`, `permissions.deny`,
as Claude Code writes them): `Tool` or `Tool(specifier)`. Tools are `Bash` (our `bash`), `Read`
(`read_file`), `Edit` (`edit_file` and `write_file`) and `Write` (`write_file`); our own tool
names work too. A `Bash` specifier is an exact command, a prefix ending in `:*` (`npm test:*`
matches `npm test` and `npm test --watch`) or a glob with `*`. A path specifier is a gitignore
style glob: `//abs/path`, `~/path` (home), `/path` (from the project root) or `./path`/`path`
(from the working directory); `**` crosses folders, `dir/**` is everything under `dir`.

Order: deny wins over ask, ask over allow. Then the mode (`permissions.defaultMode`, or the
launch flag): `bypassPermissions` runs everything no deny rule stops; `plan` runs no edit and no
`bash`; `acceptEdits` runs edits inside the working directory without asking; `default` asks
for those. Reads inside the working directory always run; a read or edit outside it, and every
`bash` command, needs an allow rule, a grant or an answer.

The session's scratchpad (`scratchpad`, workspace/scratchpad.py): reads and edits of files inside
it run without asking, in every mode but plan (which changes no file); deny and ask rules that
match still win. Shell commands are judged as anywhere else.

A `bash` command is judged by every program it runs (workspace/shell_commands.py, on dash's
grammar): each simple command anywhere in it (`a && b; c | d`, `$(...)`, backquotes, subshells,
groups, here-docs, `sh -c`/`eval` strings, `xargs`/`find -exec`), normalized (`FOO=1 \\rm`,
`'rm'`, `/bin/rm` are `rm`; wrappers such as `env`, `command`, `nice`, `timeout` dropped). It runs
when every program is allowed; "don't ask again" saves one rule per program that was not. A deny
rule matching any program refuses the command; one that may match a program the text does not
show (a command word from a variable, a substitution or a glob, a shell reading a script or its
input, a line that does not parse) asks in every mode, headless refuses. The rules themselves must
all parse: a settings file with one that does not refuses the turn (`parse_rules`).

Headless (`-p`, no `ask`): edits inside the working directory run (a rewind undoes them); what
would be asked is refused with a tool error that tells the model and the user how to allow it,
and the turn goes on. Interactive: `ask(PermissionRequest)` returns a `PermissionAnswer`; allow
for the session adds the rules to `Grants` (an object the shell carries over `/fork`), "don't ask
again" also writes them to the project's `.commandcode/settings.local.json`. Besides the exact
rules a request offers wider ones: an edit's (or read's) folder, `Edit(/src/**)` (Claude Code's
"allow all edits during this session", kept to the folder), and a `bash` command's prefixes,
`Bash(npm test:*)` (workspace/command_prefix.py). A question an ask rule raises, or one about a
call no rule can name, offers only once or no: remembering it would change nothing.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config.context import ProjectContext
from ..config.settings import Settings, add_to_list, repository_root
from ..errors import SettingsError, UsageError
from ..workspace.command_prefix import wider_rules
from ..workspace.shell_commands import MAYBE, NO, YES, Invocation, Pattern, invocations
from .tools import ToolResult, nameable, target_path

MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.S)
_TOOL_KIND = {"bash": "bash", "read_file": "read", "write_file": "edit", "edit_file": "edit"}
_RULE_KINDS = {"bash": {"bash"}, "read": {"read", "read_file"}, "edit": {"edit", "write", "edit_file", "write_file"}}
_HOW_TO_ALLOW = ('add an allow rule such as "{rule}" to permissions.allow in .commandcode/settings.json, '
                 "or run with --permission-mode bypassPermissions (or --yolo)")


class PermissionAnswer:
    """What the user answered (the values are plain strings, for the shell to map keys to)."""

    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"  # the request's exact rules, for this session
    ALLOW_SESSION_WIDER = "allow_session_wider"  # its wider rules (a prefix, a folder), for this session
    ALWAYS = "always"  # don't ask again: also saved in the project's settings.local.json
    ALWAYS_WIDER = "always_wider"
    DENY = "deny"
    ALL = (ALLOW_ONCE, ALLOW_SESSION, ALLOW_SESSION_WIDER, ALWAYS, ALWAYS_WIDER, DENY)
    SAVED = (ALWAYS, ALWAYS_WIDER)


class PermissionRequest:
    """A tool call waiting for an answer: the tool, its input, a one-line `summary` for the
    prompt, the exact `rules` an allow answer would add, the `wider` rules offered as well (a
    `bash` command's prefixes, an edit's folder; `wider_label` says what they cover), and whether
    anything can be remembered at all (`rememberable`: not when an ask rule asks every time or
    no rule can name the call). A sub-agent run's question says who asks (`origin`) and carries
    the run's `cancel`: it is withdrawn (denied) when the run is stopped, not when the turn is."""

    __slots__ = ("cancel", "input", "origin", "rememberable", "rules", "summary", "tool", "wider", "wider_label")

    def __init__(self, tool: str, tool_input: dict[str, Any], summary: str, rules: list[str], *,
                 wider: list[str] | None = None, wider_label: str = "", rememberable: bool = True) -> None:
        self.tool, self.input, self.summary, self.rules = tool, tool_input, summary, rules
        self.wider, self.wider_label, self.rememberable = wider, wider_label, rememberable
        self.origin = ""  # "" for the session's own turn; else e.g. "sub-agent general bg-1-…"
        self.cancel: threading.Event | None = None

    def granted(self, answer: str) -> list[str]:
        """The rules `answer` adds ([] for once or no)."""
        if not self.rememberable or answer in (PermissionAnswer.ALLOW_ONCE, PermissionAnswer.DENY):
            return []
        wider = answer in (PermissionAnswer.ALLOW_SESSION_WIDER, PermissionAnswer.ALWAYS_WIDER)
        return self.wider if wider and self.wider else self.rules

    def __repr__(self) -> str:
        return f"PermissionRequest({self.summary!r}, rules={self.rules!r}, wider={self.wider!r})"


AskPermission = Callable[[PermissionRequest], str]


class Grants:
    """Session-scoped allow rules ("allow for this session"). They live as long as the object:
    the shell hands the same one to a `/fork` in the same process; a resume starts empty."""

    def __init__(self, rules: list[str] | None = None) -> None:
        self.rules: list[str] = list(rules or [])

    def add(self, rules: list[str]) -> None:
        for rule in rules:
            if rule not in self.rules:
                self.rules.append(rule)


def check_mode(mode: str) -> str:
    """`mode` when it is a permission mode.

    Raises:
        UsageError: it is not.
    """
    if mode not in MODES:
        raise UsageError(f"unknown permission mode {mode!r}", hint=f"use one of: {', '.join(MODES)}")
    return mode


def _glob(pattern: str) -> re.Pattern[str]:
    out, index = [], 0
    while index < len(pattern):
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out) + r"(?:/.*)?\Z", re.S)


# Claude Code's tools commandcode has no counterpart for: their rules are valid and apply to nothing
_OTHER_TOOLS = frozenset({"multiedit", "notebookedit", "notebookread", "webfetch", "websearch", "glob", "grep", "ls",
                          "task", "todowrite", "todoread", "killshell", "bashoutput", "exitplanmode", "slashcommand",
                          "skill", "agent"})


class Rule:
    """One parsed rule."""

    __slots__ = ("kind", "pattern", "specifier", "text")

    def __init__(self, text: str, kind: str, specifier: str | None) -> None:
        self.text, self.kind, self.specifier = text, kind, specifier
        self.pattern = Pattern.parse(specifier) if kind == "bash" and specifier is not None else None

    @classmethod
    def parse(cls, text: str) -> Rule | None:
        """The rule, or None for a well-formed rule of a tool commandcode does not have.

        Raises:
            ValueError: the rule is malformed (the message says how).
        """
        match = _RULE.match(text)
        if not match:
            raise ValueError("expected Tool or Tool(specifier), with the parenthesis closed")
        name = match.group(1).lower()
        kind = next((kind for kind, names in _RULE_KINDS.items() if name in names), None)
        if kind is None:
            if name in _OTHER_TOOLS or name.startswith("mcp__"):
                return None
            raise ValueError(f"unknown tool {match.group(1)!r} (Bash, Read, Edit or Write)")
        specifier = match.group(2)
        return cls(text, kind, specifier.strip() if specifier is not None and specifier.strip() not in ("", "*") else None)

    def matches_call(self, call: Invocation, *, strict: bool) -> str:
        """YES, NO or MAYBE for one program a command runs (see `shell_commands.Pattern`)."""
        if self.pattern is None:
            return YES
        return self.pattern.match(call, strict=strict)

    def matches_command(self, command: str) -> bool:
        """Whether every program of `command` is matched for sure."""
        calls = invocations(command)
        return bool(calls) and all(self.matches_call(call, strict=True) == YES for call in calls)

    def matches_path(self, path: str, cwd: str, root: str) -> bool:
        if self.specifier is None:
            return True
        spec = self.specifier
        if spec.startswith("//"):
            base = spec[1:]
        elif spec.startswith("~/"):
            base = os.path.join(os.path.expanduser("~"), spec[2:])
        elif spec.startswith("/"):
            base = os.path.join(root, spec[1:])
        else:
            base = os.path.join(cwd, spec[2:] if spec.startswith("./") else spec)
        return _glob(os.path.normpath(base) if "*" not in base else base).match(path) is not None


def parse_rules(rules: list[tuple[str, str]], key: str) -> list[Rule]:
    """The rules of `permissions.<key>`, given as (rule, file) pairs.

    Raises:
        SettingsError: one does not parse; the message names it and its file.
    """
    parsed: list[Rule] = []
    for text, where in rules:
        try:
            rule = Rule.parse(text)
        except ValueError as error:
            raise SettingsError(f"{where}: permissions.{key}: the rule {json.dumps(text)} does not parse: {error}; "
                                "fix or remove it (no rule of this file applies until then)") from None
        if rule is not None:
            parsed.append(rule)
    return parsed


def _allows(call: Invocation) -> Callable[[Rule], bool]:
    def check(rule: Rule) -> bool:
        return rule.matches_call(call, strict=True) == YES

    return check


def _rules_for(calls: list[Invocation]) -> list[str]:
    rules: list[str] = []
    for call in calls:
        if call.rule() not in rules:
            rules.append(call.rule())
    return rules


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class Policy:
    """The permission decisions of one turn (settings read once, when the turn starts)."""

    def __init__(self, cwd: Path, *, mode: str | None = None, ask: AskPermission | None = None,
                 grants: Grants | None = None, notify: Callable[[str], None] | None = None,
                 scratchpad: str | None = None, settings: Settings | None = None) -> None:
        if settings is None:  # a caller with no turn's settings (a library's, a sub-agent run's): the folder's own
            settings = ProjectContext(cwd).settings()
        self.cwd = os.path.realpath(cwd)
        self.root = os.path.realpath(repository_root(cwd))
        self.mode = check_mode(mode) if mode else settings.permissions_default_mode
        if self.mode not in MODES:
            self.mode = "default"
        self.allow = parse_rules(settings.permission_rules("allow"), "allow")
        self.ask_rules = parse_rules(settings.permission_rules("ask"), "ask")
        self.deny = parse_rules(settings.permission_rules("deny"), "deny")
        self.warnings = settings.warnings
        self.ask = ask
        self.grants = grants if grants is not None else Grants()
        self.notify = notify
        self.scratchpad = os.path.realpath(scratchpad) if scratchpad else None  # reads and writes there: no prompt

    # The gate the turn calls ----------------------------------------------------------------

    def __call__(self, name: str, tool_input: dict[str, Any]) -> ToolResult | None:
        """None: run the tool; else the refusal the model sees."""
        kind = _TOOL_KIND.get(name)
        if kind is None:
            return None  # an unknown tool: the tool runner answers with its own error
        if kind == "bash":
            command = tool_input.get("command")
            return self._decide_bash(tool_input, command) if isinstance(command, str) and command.strip() else None
        path = target_path(tool_input, Path(self.cwd))
        if path is None or not nameable(path):
            return None  # no file can have this name: the tool says so
        # Where the call lands: a read follows a final symlink; an edit never writes through
        # one (the tool refuses it), so only its folder is resolved.
        where = os.path.realpath(path) if kind == "read" else os.path.join(os.path.realpath(path.parent), path.name)
        return self._decide_path(name, kind, tool_input, where)

    def _granted(self, kind: str, check: Callable[[Rule], bool]) -> bool:
        return any(rule.kind == kind and check(rule) for rule in self.allow + self._grant_rules())

    def _grant_rules(self) -> list[Rule]:
        rules = []
        for text in self.grants.rules:
            try:
                rule = Rule.parse(text)
            except ValueError:
                continue  # a grant is a rule this module wrote; one that no longer parses grants nothing
            if rule is not None:
                rules.append(rule)
        return rules

    def _decide_bash(self, tool_input: dict[str, Any], command: str) -> ToolResult | None:
        calls = invocations(command)
        unsure: list[tuple[Invocation, Rule]] = []
        for call in calls:
            for rule in self.deny:
                if rule.kind != "bash":
                    continue
                answer = rule.matches_call(call, strict=False)
                if answer == YES:
                    return self._denied_by(rule, f"bash `{call.text}`")
                if answer == MAYBE:
                    unsure.append((call, rule))
        if unsure:  # in every mode: a deny rule may cover what the text does not show
            call, rule = unsure[0]
            if self.ask is None:
                return ToolResult(f"Error: permission needed: bash `{call.text}` cannot be checked against the deny rule "
                                  f"\"{rule.text}\" (its program or words come from a variable, a substitution, a glob "
                                  "or its input), so it was not run. Write the command out literally", True)
            return self._ask(PermissionRequest("bash", tool_input, f"bash: {command} (cannot be checked against the deny "
                                               f"rule \"{rule.text}\": `{call.text}` is not fully known from the text)",
                                               _rules_for([call for call, _ in unsure]), rememberable=False))
        if self.mode == "bypassPermissions":
            return None
        if self.mode == "plan":
            return ToolResult("Error: plan mode: bash commands do not run while planning; "
                              "present the plan, the user switches the mode to carry it out", True)
        needed, asked_by_rule = [], False
        for call in calls:
            asked = any(rule.kind == "bash" and rule.matches_call(call, strict=False) != NO for rule in self.ask_rules)
            allowed = self._granted("bash", _allows(call))
            asked_by_rule = asked_by_rule or asked
            if asked or not allowed:
                needed.append(call)
        if not needed:
            return None
        unknown = next((call for call in needed if not call.resolved), None)
        if unknown is not None and self.ask is None:  # no allow rule can cover it: say what to do instead
            return ToolResult(f"Error: permission needed: bash: {command} was not run; what `{unknown.text}` runs is not "
                              "known from the command text (a program from a variable, a substitution or a glob, or a "
                              "variable such as PATH that changes what runs), so no allow rule covers it. Write the "
                              "command out literally, or run with --permission-mode bypassPermissions (or --yolo)", True)
        wider = wider_rules(needed)
        return self._ask(PermissionRequest(
            "bash", tool_input, f"bash: {command}", _rules_for(needed), wider=wider,
            wider_label=", ".join(f"`{rule[5:-1]}`" for rule in wider or []),
            rememberable=not asked_by_rule and all(call.exact for call in needed)))

    def _decide_path(self, name: str, kind: str, tool_input: dict[str, Any], path: str) -> ToolResult | None:
        denied = next((rule for rule in self.deny if rule.kind == kind and rule.matches_path(path, self.cwd, self.root)), None)
        if denied is not None:
            return self._denied_by(denied, f"{name} {path}")
        if self.mode == "bypassPermissions":
            return None
        if self.mode == "plan" and kind == "edit":
            return ToolResult(f"Error: plan mode: {name} does not change files while planning; "
                              "present the plan, the user switches the mode to carry it out", True)
        tool = "Read" if kind == "read" else "Edit"
        if any(rule.kind == kind and rule.matches_path(path, self.cwd, self.root) for rule in self.ask_rules):
            return self._ask(PermissionRequest(name, tool_input, f"{name} {path} (an ask rule: asked every time)",
                                               [f"{tool}(/{path})"], rememberable=False))
        def matches(rule: Rule) -> bool:
            return rule.matches_path(path, self.cwd, self.root)

        if self._granted(kind, matches) or (self.scratchpad is not None and _inside(path, self.scratchpad)):
            return None
        inside = _inside(path, self.cwd)
        if inside and (kind == "read" or self.mode == "acceptEdits" or self.ask is None):
            return None
        where = "" if inside else " (outside the working directory)"
        folder_rule, folder_label = self._folder_rule(tool, os.path.dirname(path))
        return self._ask(PermissionRequest(name, tool_input, f"{name} {path}{where}", [f"{tool}(/{path})"],
                                           wider=[folder_rule] if folder_rule else None,
                                           wider_label=f"{'reads' if kind == 'read' else 'edits'} in {folder_label}"))

    def _folder_rule(self, tool: str, folder: str) -> tuple[str | None, str]:
        """The rule for everything under `folder` (from the project root when inside it, so the
        saved rule still holds in a copy of the checkout), and how the prompt names the folder."""
        if any(character in folder for character in "*?"):
            return None, ""  # a glob character in the name: the rule would cover other folders
        label = os.path.relpath(folder, self.cwd) if _inside(folder, self.cwd) else folder
        label = "this folder (./)" if label == "." else label.rstrip(os.sep) + os.sep
        if _inside(folder, self.root):
            relative = os.path.relpath(folder, self.root)
            return f"{tool}(/{'' if relative == '.' else relative + '/'}**)", label
        return f"{tool}(/{folder.rstrip(os.sep)}/**)", label

    def _denied_by(self, rule: Rule, what: str) -> ToolResult:
        return ToolResult(f"Error: permission denied: {what} is refused by the deny rule \"{rule.text}\" in the settings", True)

    def _ask(self, request: PermissionRequest) -> ToolResult | None:
        if self.ask is None:
            return ToolResult(f"Error: permission needed: {request.summary} was not run; nobody can approve it in a "
                              f"headless run. To allow it, {_HOW_TO_ALLOW.format(rule=request.rules[0])}", True)
        answer = self.ask(request)
        if answer not in PermissionAnswer.ALL or answer == PermissionAnswer.DENY:
            return ToolResult(f"Error: the user denied {request.summary}; it did not run. Ask them or try another way",
                              True)
        rules = request.granted(answer)  # session memory: the grants; don't ask again: the file as well
        self.grants.add(rules)
        if rules and answer in PermissionAnswer.SAVED:
            self._save(rules)
        return None

    def _save(self, rules: list[str]) -> None:
        try:
            for rule in rules:
                add_to_list("local", "permissions.allow", rule, cwd=self.cwd)
        except SettingsError as error:
            if self.notify is not None:
                self.notify(f"{error}; allowed for this session only")
