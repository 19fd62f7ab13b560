"""`/rewind` (also opened by Esc Esc on an empty prompt): the rewind menu inside the shell.

The menu (`ui/screens/rewind.py`) lists the current session's checkpoints newest first, "Redo"
when a rewind can be undone, and after `/clear` "/resume <id> (previous session)" first. The
chosen action runs through the session's own `AgentSession` (its writer and checkpoint manager),
and what it did is printed; choosing the previous session switches to it. A rewind of the
conversation puts the rewound prompt back into the input box, as Claude Code does.
"""

from __future__ import annotations

from ...checkpoints.modes import RewindMode
from ...errors import CommandcodeError
from ..slash import Shell, SlashCommand


def run(shell: Shell, args: str) -> None:
    """Opens the menu and runs what the user chose.

    Raises:
        CommandcodeError: there is nothing to rewind to, or the chosen rewind was refused.
    """
    from ...ui.rewind_menu import ROW_REDO, ROW_RESUME, MenuChoice, new_screen, perform

    if args.strip():
        raise CommandcodeError("/rewind takes no arguments", hint="it opens the rewind menu")
    agent = shell.agent
    choice = shell.run_screen(new_screen(agent, shell.previous_session_id, project=shell.project))
    if not isinstance(choice, MenuChoice):
        shell.notice("Rewind cancelled; nothing was changed")
        return
    if choice.row.kind == ROW_RESUME and choice.row.session_id:
        from ...agent.runtime import AgentSession

        shell.switch_to(AgentSession.for_reference(choice.row.session_id, shell.cwd, project=shell.project))
        shell.notice(f"Resumed the previous session {choice.row.session_id}")
        return
    offered = {item.number for item in agent.rewinds.checkpoint_choices()} if choice.row.kind == ROW_REDO else set()
    result = perform(agent, choice)
    if result is None:
        return
    touched = len(result.written) + len(result.deleted)
    if result.redo:
        shell.print(redo_summary(result.number, sorted({item.number for item in agent.rewinds.checkpoint_choices()} - offered),
                                 touched))
    else:
        shell.print(f"Rewound to checkpoint {result.number} ({result.mode.label.lower()}): {touched} file(s) restored")
    for skipped in result.skipped:
        shell.notice(f"left alone: {skipped.path} ({skipped.reason})")
    shell.notice("undo it with /rewind → Redo" if not result.redo else "rewind again with /rewind")
    if result.redo or choice.mode is not RewindMode.CODE:  # the conversation moved: show where it stands
        shell.show_recap()
    if not result.redo and choice.mode in (RewindMode.BOTH, RewindMode.CONVERSATION) and choice.row.prompt:
        shell.put_input(choice.row.prompt)  # the rewound prompt, back in the input box to edit and resend


def redo_summary(number: int, back: list[int], touched: int) -> str:
    """What a redo did, in words: which checkpoints the conversation holds again, and the files."""
    files = f"{touched} file(s) put back as they were before that rewind"
    if not back:
        return f"Undid the rewind to checkpoint {number}: the conversation did not move; {files}"
    shown = f"checkpoint {back[0]}" if len(back) == 1 else f"checkpoints {back[0]}–{back[-1]}" if \
        back == list(range(back[0], back[-1] + 1)) else "checkpoints " + ", ".join(map(str, back))
    return (f"Undid the rewind to checkpoint {number}: the conversation is back where it was before it, "
            f"with {shown} in it again; {files}")


COMMANDS = [
    SlashCommand("rewind", run, "Rewind code and/or conversation to a checkpoint, or redo",
                 aliases=("checkpoint",),
                 help="/rewind opens the rewind menu: pick a checkpoint, then restore code and conversation, "
                      "conversation only, code only, summarize from or up to it; Redo undoes the last rewind."),
]
