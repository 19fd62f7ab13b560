"""The system prompt a session's model gets: who it is, where it works, and its scratchpad.

`system_prompt(cwd, scratchpad_lines)` is sent by the OpenAI-compatible provider as the first
`system` message and read by the offline model (which takes the scratchpad path from it, as a
real model would). `SCRATCHPAD_LINE` is the line that names the path: `Scratchpad: <path>`.
"""

from __future__ import annotations

import re

BASE_PROMPT = ("You are Command Code, a coding agent working in {cwd}. Use the tools to read, write and edit "
               "files and to run shell commands; keep answers short.")
SCRATCHPAD_LINE = re.compile(r"^Scratchpad: (.+)$", re.M)


def system_prompt(cwd: str, scratchpad_lines: str | None = None) -> str:
    """The whole system prompt for a session working in `cwd`."""
    text = BASE_PROMPT.format(cwd=cwd)
    return f"{text}\n\n{scratchpad_lines}" if scratchpad_lines else text


def scratchpad_in(system: str | None) -> str | None:
    """The scratchpad path a system prompt advertises (None when it names none)."""
    match = SCRATCHPAD_LINE.search(system or "")
    return match.group(1).strip() if match else None
