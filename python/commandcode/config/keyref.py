"""Secrets named by reference in a settings file, never written in it: `"$VAR"` or `"{env:VAR}"`
(an environment variable) or `"!command"` (a shell command's first output line). Providers'
`apiKey` (agent/providers/config.py) and the share service's `share.token` (sharing/remote.py)
are resolved here."""

from __future__ import annotations

import os
import re
import subprocess

from ..errors import CommandcodeError

ENV_BRACES = re.compile(r"^\{env:([A-Za-z_][A-Za-z0-9_]*)\}$")
ENV_DOLLAR = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")
COMMAND_SECONDS = 30


def is_reference(value: str) -> bool:
    """True for `$VAR`, `{env:VAR}` and `!command`; anything else looks like a pasted secret."""
    return bool(ENV_BRACES.match(value) or ENV_DOLLAR.match(value) or value.startswith("!"))


def resolve_reference(value: str, *, owner: str, field: str, where: str,
                      error: type[CommandcodeError] = CommandcodeError) -> str:
    """The secret `value` names (`is_reference(value)` must hold).

    Raises:
        error: the variable it names is unset, or its command fails or prints nothing; the message
            starts with `owner` ("provider x", "share") and never holds the secret.
    """
    match = ENV_BRACES.match(value) or ENV_DOLLAR.match(value)
    if match:
        found = os.environ.get(match.group(1))
        if not found:
            raise error(f"{owner}: {field} names the environment variable {match.group(1)}, which is not set",
                        hint=f"export {match.group(1)}=... or change {field} in {where}")
        return found
    try:
        completed = subprocess.run(["/bin/sh", "-c", value[1:]], capture_output=True, text=True,
                                   timeout=COMMAND_SECONDS, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as problem:
        raise error(f"{owner}: the {field} command could not run ({problem})") from None
    lines = completed.stdout.strip().splitlines()
    if completed.returncode != 0 or not lines:
        raise error(f"{owner}: the {field} command exited {completed.returncode} without printing a key")
    return lines[0].strip()
