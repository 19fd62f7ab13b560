"""`/export [html|md|jsonl|PATH]`: write the current session to a file (`AgentSession.export`).

No argument: the default format (the `defaultExportFormat` setting, else html) to
`command-code-session-<id>.<ext>` in the working directory; a format name picks the format; a
path picks the file (its extension the format) or, for a folder, where the default name goes.
"""

from __future__ import annotations

from ...export.redact import summary
from ...export.target import FORMATS
from ..slash import Shell, SlashCommand


def run(shell: Shell, args: str) -> None:
    argument = args.strip()
    fmt, path = (argument, None) if argument in FORMATS else (None, argument or None)
    result = shell.agent.export(path, fmt)
    details = f"{result.messages} message(s)"
    if result.format != "jsonl":
        details += f", {summary(result.redactions)}"
    if result.skipped_lines:
        details += f"; {result.skipped_lines} corrupt line(s) left out"
    shell.print(f"Exported {result.format} to {result.path} ({details})")


def complete(shell: Shell, prefix: str) -> list[str]:
    return [name for name in FORMATS if name.startswith(prefix)]


COMMANDS = [
    SlashCommand("export", run, "Write the session to an html, md or jsonl file",
                 help="/export [html|md|jsonl|PATH]: the default format (html unless the defaultExportFormat "
                      "setting says otherwise) to command-code-session-<id>.<ext> here, or the format or file "
                      "you name. Secrets are redacted and paths sanitized in html and md; jsonl is a byte copy.",
                 complete=complete),
]
