"""`/compact [instructions]` and `/compact-mode [fast|full]`: summarize the older context now
(`agent.compaction.compact`, which appends a compaction entry and updates `meta.compaction`), and
show or choose how automatic compaction works (`agent.compaction.mode`)."""

from __future__ import annotations

from ...errors import UsageError
from ..slash import Shell, SlashCommand

MODES = ("fast", "full")


def _compact(shell: Shell, args: str) -> None:
    agent = shell.agent
    if agent.compaction.compact(args.strip() or None) is None:
        shell.notice("nothing to compact yet: the newest ~30,000 tokens are always kept, and at least 5 older "
                     "messages are needed to summarize; nothing was written")
        return
    totals = agent.status()["compaction"]
    last = totals.get("last_tokens_saved") or 0
    shell.notice(f"compacted: {last:,} tokens saved now; {totals['tokens_saved']:,} saved in "
                 f"{totals['count']} compaction(s) of this session")


def _compact_mode(shell: Shell, args: str) -> None:
    agent = shell.agent
    mode = args.strip().lower()
    if not mode:
        shell.print(f"compact mode: {agent.compaction.mode}")
        return
    if mode not in MODES:
        raise UsageError(f"unknown compact mode {mode!r}", hint="use fast (trim old tool output) or full (summarize)")
    agent.compaction.set_mode(mode)
    shell.notice(f"compact mode: {mode}")


def _complete_mode(shell: Shell, args: str) -> list[str]:
    return [mode for mode in MODES if mode.startswith(args.strip())]


COMMANDS = [
    SlashCommand("compact", _compact, "Summarize the older context now",
                 help="/compact [INSTRUCTIONS] summarizes the conversation before the kept tail (the newest ~30,000 "
                      "tokens) into one compaction entry; the log is never rewritten. It reports the tokens saved "
                      "now and in all of this session's compactions."),
    SlashCommand("compact-mode", _compact_mode, "Show or set the compaction mode (fast or full)", complete=_complete_mode,
                 help="/compact-mode fast trims old tool output at 50% and 80% of the window without saving it; "
                      "/compact-mode full summarizes at 90%. A bare /compact-mode shows the mode."),
]
