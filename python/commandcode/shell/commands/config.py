"""`/config`: the effective settings and the files they come from; `/config KEY` shows one key
and its layer; `/config set [--user|--project|--local] KEY VALUE` sets a key in one layer's file
(the user's by default) through `config/settings.py`, which keeps every other key and never
overwrites a malformed file. VALUE is JSON when it parses as JSON (`true`, `5`, `{"a": 1}`),
else the text itself."""

from __future__ import annotations

import json

from ...errors import UsageError
from ..slash import Shell, SlashCommand

_LAYER_FLAGS = {"--user": "user", "--project": "project", "--local": "local"}
_KNOWN_KEYS = ("permissions.allow", "permissions.deny", "permissions.ask", "permissions.defaultMode", "statusLine",
               "branchSummary", "cleanupPeriodDays", "defaultExportFormat", "checkpoints.trackShell",
               "checkpoints.compatibleBackups", "checkpoints.maxStoreBytes", "disableScratchpad")


def _config(shell: Shell, args: str) -> None:
    from ...config.settings import shown_path

    words = args.split(None, 1)
    if words and words[0] == "set":
        _set(shell, words[1] if len(words) > 1 else "")
        return
    settings = shell.project.refresh().settings()  # what the files say now (one may be edited by hand)
    if words:
        key = words[0]
        layer = settings.source(key)
        if layer is None:
            shell.print(f"{key} is not set (in any of: {', '.join(shown_path(item.path) for item in settings.layers)})")
        else:
            shell.print(f"{key} = {json.dumps(settings.get(key), ensure_ascii=False)}  (from {layer.layer}: {shown_path(layer.path)})")
        return
    lines = ["Settings files (later ones win):"]
    for layer in settings.layers:
        state = f"{len(layer.data)} key(s)" if layer.exists else "not there"
        lines.append(f"  {layer.layer:<8} {shown_path(layer.path)} — {state}")
    lines.append("Effective settings:")
    lines.append(json.dumps(settings.data, indent=2, ensure_ascii=False) if settings.data else "  (none set)")
    lines.extend(f"warning: {warning}" for warning in settings.warnings)
    lines.append("Set a key: /config set [--user|--project|--local] KEY VALUE")
    shell.print("\n".join(lines))


def _set(shell: Shell, args: str) -> None:
    from ...config.settings import settings_path, shown_path, update_setting

    layer = "user"
    words = args.split(None, 1)
    if words and words[0] in _LAYER_FLAGS:
        layer = _LAYER_FLAGS[words[0]]
        words = words[1].split(None, 1) if len(words) > 1 else []
    else:
        words = args.split(None, 1)
    if len(words) < 2:
        raise UsageError("/config set needs a key and a value", hint="e.g. /config set --local permissions.defaultMode plan")
    key, raw = words[0], words[1].strip()
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    if key in ("permissions.allow", "permissions.deny", "permissions.ask"):
        _check_rules(key, value)
    try:
        update_setting(layer, key, value, cwd=shell.cwd)
    finally:
        shell.project.refresh()  # the context rereads what was written
    shell.notice(f"{key} = {json.dumps(value, ensure_ascii=False)} written to {shown_path(settings_path(layer, shell.cwd))}")


def _check_rules(key: str, value: object) -> None:
    """A permission list is written only when every rule parses (a file with one that does not
    refuses every turn).

    Raises:
        UsageError: it is no list of strings, or a rule does not parse.
    """
    from ...agent.permissions import Rule

    if not isinstance(value, list) or not all(isinstance(rule, str) for rule in value):
        raise UsageError(f"{key} takes a list of rules", hint=f'e.g. /config set --local {key} ["Bash(npm test:*)"]')
    for rule in value:
        try:
            Rule.parse(rule)
        except ValueError as error:
            raise UsageError(f"the rule {json.dumps(rule)} does not parse: {error}; nothing was written") from None


def _complete(shell: Shell, args: str) -> list[str]:
    if args.startswith("set "):
        rest = args[4:]
        flags = [f"set {flag} " for flag in _LAYER_FLAGS if flag.startswith(rest)] if rest.startswith("-") or not rest else []
        keys = [f"set {key} " for key in _KNOWN_KEYS if key.startswith(rest)]
        return flags + keys
    return ["set "] * ("set ".startswith(args)) + [key for key in _KNOWN_KEYS if key.startswith(args)]


COMMANDS = [
    SlashCommand("config", _config, "Show the effective settings and their files, or set a key", complete=_complete,
                 help="/config shows every settings file (user, project, project-local) and the merged settings; "
                      "/config KEY shows one key and the file it comes from; /config set [--user|--project|--local] "
                      "KEY VALUE writes it (VALUE is JSON when it parses, else text)."),
]
