"""The prefix rule a permission prompt offers for one program a shell command runs (Claude
Code's `Bash(npm test:*)`), computed on the invocations of the real grammar
(workspace/shell_commands.py), so a prefix names one simple command and never the other parts of
a compound one (`npm test && rm -rf x` needs its own rule for `rm`).

The prefix is the program, and for tools driven by a subcommand (`git`, `npm`, `cargo`, ...) the
subcommand too: `git push:*`, never `git:*`. No prefix is offered where "anything after these
words" would mean any code at all or an irreversible act: shells, interpreters, wrappers that run
another program, network clients, destructive programs, `find` (its `-exec`/`-delete`), or an
invocation whose words the text does not fully show; those are allowed by their exact command.
"""

from __future__ import annotations

import os
import shlex

from .shell_commands import SHELLS, WRAPPERS, Invocation

# `PROGRAM SUBCOMMAND ...`: the prefix keeps the subcommand (`npm:*` would allow `npm publish`)
SUBCOMMAND_TOOLS = frozenset({
    "git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "podman", "kubectl", "helm", "pip", "pip3", "uv",
    "poetry", "pdm", "hatch", "make", "gradle", "mvn", "dotnet", "rustup", "gh", "terraform", "brew", "apt", "apt-get",
    "systemctl", "conda", "mix", "composer", "swift", "zig", "deno", "just", "tox", "nox", "pytest", "ruff", "mypy"})
# programs whose "anything after" is any code, another program, the network or a loss
NO_PREFIX = SHELLS | frozenset(WRAPPERS) | frozenset({
    "eval", "exec", "source", ".", "su", "python", "python3", "python2", "pypy", "pypy3", "node", "nodejs", "npx",
    "bunx", "pnpx", "ruby", "perl", "php", "lua", "luajit", "Rscript", "osascript", "powershell", "pwsh", "fish",
    "tclsh", "awk", "gawk", "mawk", "sed", "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp",
    "rsync", "ftp", "telnet", "find", "rm", "rmdir", "dd", "mkfs", "shred", "truncate", "chmod", "chown", "chgrp",
    "kill", "killall", "pkill", "reboot", "shutdown", "halt", "poweroff", "mv", "ln", "install", "crontab", "at",
    "watch", "parallel", "git-shell", "busybox", "vim", "vi", "nvim", "emacs", "nano", "less", "more", "man"})


def prefix_rule(call: Invocation) -> str | None:
    """`Bash(WORDS:*)` for `call`, or None when no prefix is safe to offer."""
    if not call.resolved or call.opaque or not call.words:
        return None
    program = call.words[0].value
    if program is None or "/" in program or os.path.basename(program) in NO_PREFIX or program.startswith("-"):
        return None
    words = [program]
    if program in SUBCOMMAND_TOOLS:
        if len(call.words) < 2:
            return None
        sub = call.words[1].value
        if sub is None or sub.startswith("-") or "*" in sub:
            return None  # options before the subcommand: `git:*`-wide, so none
        words.append(sub)
    if any("*" in word for word in words):
        return None  # a glob character would make the rule a glob, not a prefix
    return "Bash(" + " ".join(shlex.quote(word) for word in words) + ":*)"


def wider_rules(calls: list[Invocation]) -> list[str] | None:
    """One rule per program of a command: its prefix where one is safe, else its exact command;
    None when no program has a prefix (the exact rules say it all)."""
    rules: list[str] = []
    widened = False
    for call in calls:
        prefix = prefix_rule(call)
        rule = prefix if prefix is not None else call.rule()
        widened = widened or prefix is not None
        if rule not in rules:
            rules.append(rule)
    return rules if widened else None
