"""`/copy`: the last assistant reply to the clipboard (through `Shell.copy`, `present/clipboard.py`)."""

from __future__ import annotations

from ...errors import CommandcodeError
from ..slash import Shell, SlashCommand


def last_reply(messages: list[dict[str, object]]) -> str | None:
    """The text of the last assistant message that has any."""
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            continue
        text = "\n\n".join(str(block.get("text", "")) for block in blocks
                           if isinstance(block, dict) and block.get("type") == "text" and str(block.get("text", "")).strip())
        if text:
            return text
    return None


def run(shell: Shell, args: str) -> None:
    if args.strip():
        raise CommandcodeError("/copy takes no arguments", hint="it copies the last assistant reply")
    text = last_reply(shell.agent.handle.messages)
    if text is None:
        raise CommandcodeError("nothing to copy yet", hint="/copy copies the last assistant reply")
    shell.notice(shell.copy(text))


COMMANDS = [SlashCommand("copy", run, "Copy the last assistant reply to the clipboard",
                         help="/copy: the last assistant reply to the clipboard (OSC 52; inside tmux also its "
                              "buffer; else wl-copy, xclip or pbcopy). Says so when none works.")]
