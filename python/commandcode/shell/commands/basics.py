"""`/help [CMD]`, `/exit` (alias `/quit`) and `/expand [N]`: the shell's own commands."""

from __future__ import annotations

from ...errors import UsageError
from ..slash import Shell, SlashCommand, registry


def _help(shell: Shell, args: str) -> None:
    commands = registry()
    wanted = args.strip().lstrip("/").lower()
    if wanted:
        command = commands.get(wanted)
        if command is None:
            import difflib

            near = difflib.get_close_matches(wanted, list(commands), n=1, cutoff=0.5)
            raise UsageError(f"no command /{wanted}", hint=f"did you mean /{near[0]}?" if near else "type /help for the list")
        aliases = f" (alias: {', '.join('/' + alias for alias in command.aliases)})" if command.aliases else ""
        shell.print(f"/{command.name}{aliases}\n{command.help}")
        return
    seen: list[SlashCommand] = []
    for command in commands.values():
        if command not in seen:
            seen.append(command)
    lines = ["Commands (/help CMD for more):"]
    for command in sorted(seen, key=lambda command: command.name):
        aliases = f" (/{', /'.join(command.aliases)})" if command.aliases else ""
        lines.append(f"  /{command.name}{aliases} — {command.summary}")
    lines.append("Keys: Enter sends · Alt+Enter newline · Tab completes · Ctrl+R searches history · "
                 "Esc/Ctrl+C interrupts a turn · Esc Esc rewinds · Shift+Tab permission mode · Ctrl+O expands the last tool call")
    shell.print("\n".join(lines))


def _complete_help(shell: Shell, args: str) -> list[str]:
    return sorted(name for name in registry() if name.startswith(args.strip().lstrip("/")))


def _exit(shell: Shell, args: str) -> None:
    shell.exit()


def _expand(shell: Shell, args: str) -> None:
    text = args.strip().lstrip("#")
    if text and not text.isdigit():
        raise UsageError(f"/expand takes a tool call number, not {text!r}", hint="e.g. /expand 2 (the #N of its line)")
    shell.expand(int(text) if text else shell.tool_call_count)


def _complete_expand(shell: Shell, args: str) -> list[str]:
    return [str(number) for number in range(shell.tool_call_count, 0, -1)]


COMMANDS = [
    SlashCommand("help", _help, "List the commands, or show one command's help", complete=_complete_help,
                 help="/help lists every command and alias; /help CMD shows what CMD does."),
    SlashCommand("exit", _exit, "Leave the shell (the session stays resumable)", aliases=("quit",),
                 help="Leaves the shell. A saved session stays resumable (commandcode -c or -r ID); a new "
                      "session with no reply yet leaves no file."),
    SlashCommand("expand", _expand, "Show a tool call whole (default: the last)", complete=_complete_expand,
                 help="/expand [N] shows tool call #N (the number at the end of its collapsed line) with its "
                      "input and its full result. Ctrl+O expands the last one."),
]
