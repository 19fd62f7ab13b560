"""Session commands: `/clear` (alias `/new`), `/rename [NAME]`, `/name [NAME]`, `/session-file`,
`/status` and `/trace`. Each is a thin caller of `AgentSession` (names, status, trace ids live
in the `agent` services)."""

from __future__ import annotations

from ...errors import CommandcodeError
from ..slash import Shell, SlashCommand


def _clear(shell: Shell, args: str) -> None:
    from ...agent.runtime import AgentSession

    old = shell.agent
    fresh = AgentSession.start(shell.cwd, persist=old.handle.persist, model=old.models.model, entrypoint=None,
                               summarizer=old.summarizer, notify=old.notify, project=old.handle.project)
    saved = old.handle.exists_on_disk
    shell.switch_to(fresh)
    if saved:
        shell.notice(f"new session; the previous one stays resumable: commandcode -r {old.session_id}")
    else:
        shell.notice("new session (the previous one had nothing saved, so it left no file)")


def _rename(shell: Shell, args: str) -> None:
    agent = shell.agent
    if not args.strip() and agent.name:  # a bare /rename picks a title for an unnamed session only
        shell.notice(f"the session is named {agent.name!r}; /rename NAME renames it")
        return
    name = args.strip() or agent.suggest_title()
    stored = agent.rename(name)
    shell.set_title(stored)
    later = "" if agent.handle.exists_on_disk or not agent.handle.persist else " (saved with the first reply)"
    shell.notice(f"session named {stored!r}{later}")


def _name(shell: Shell, args: str) -> None:
    if args.strip():
        _rename(shell, args)
        return
    name = shell.agent.name
    shell.print(name if name else "(unnamed; /rename NAME names it, a bare /rename picks a title)")


def _session_file(shell: Shell, args: str) -> None:
    agent = shell.agent
    if not agent.handle.persist:
        shell.print(f"{agent.session_id} (--no-session: nothing is saved)")
    elif agent.handle.exists_on_disk:
        shell.print_file_link(f"{agent.session_id} ", str(agent.files.transcript))
    else:
        shell.print(f"{agent.session_id} (not created yet; saved with the first reply: {agent.files.transcript})")


def _status(shell: Shell, args: str) -> None:
    from ...present.status import status_lines

    width = 16
    shell.print("\n".join(f"{label:<{width}} {value}" for label, value in status_lines(shell.agent.status())))


def _trace(shell: Shell, args: str) -> None:
    agent = shell.agent
    trace_id = agent.turns.trace_id
    if trace_id is None:
        from ...agent.tracing import trace_ids
        from ...sessions.meta import read_meta

        known = trace_ids(read_meta(agent.files.meta)) if agent.handle.exists_on_disk else []
        trace_id = known[-1] if known else None
    if trace_id is None:
        raise CommandcodeError("no turn has run in this session yet, so there is no trace id",
                               hint="send a prompt first")
    shell.print(f"trace id {trace_id}")
    shell.notice(shell.copy(trace_id))


COMMANDS = [
    SlashCommand("clear", _clear, "Start a new session (the current one stays resumable)", aliases=("new",),
                 help="Starts a new, empty session in this shell. The current one stays resumable "
                      "(commandcode -r ID), and the rewind menu offers the way back."),
    SlashCommand("rename", _rename, "Name the session (bare: a title from the first prompt)",
                 help="/rename NAME names the session (unique in this project, case-insensitive, at most 200 "
                      "characters); a bare /rename asks the model for a title. The name is the tab title too."),
    SlashCommand("name", _name, "Show the session's name, or set it like /rename",
                 help="A bare /name shows the session's name; /name NAME renames it like /rename NAME."),
    SlashCommand("session-file", _session_file, "Show the session id and transcript path",
                 help="Shows the session id and the transcript's path (a link where the terminal supports "
                      "it); a new session has no file until its first reply."),
    SlashCommand("status", _status, "Model, context, cost, lineage, compaction, checkpoints",
                 help="Shows the session's id, path, name, cwd, model, effort, permission mode, context tokens "
                      "and share of the window, cost, lineage, compaction totals, checkpoints, trace id, "
                      "share state and the disk footprint (transcript, sidecars, checkpoints, scratchpad). `commandcode sessions status REF` prints the same."),
    SlashCommand("trace", _trace, "Copy the current turn's trace id",
                 help="Copies the W3C trace id of the running turn (or the last one) to the clipboard; every "
                      "turn's id is kept in the session's meta (traceIds)."),
]
