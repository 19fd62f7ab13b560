"""`/resume` (alias `/sessions`): pick another session and switch to it.

The picker opens through `Shell.run_screen`; the picked session is planned with source "slash"
(it always adopts its own model; the permission mode is not restored) and opened after the
questions `resume_flow.open_plan` asks (relink, another writer, summary or full). A session that
worked in a session worktree runs there (`ResumePlan.run_dir`), and the shell says so."""

from __future__ import annotations

from ...errors import CommandcodeError
from ..resume_flow import open_plan
from ..slash import Shell, SlashCommand


def run(shell: Shell, args: str) -> None:
    from ...launcher.resume import checked_source, plan_picked
    from ...ui.screens.picker import PickerScreen
    from ...ui.screens.picker_data import PickerData

    words = args.split()
    source = "commandcode"
    if words[:1] == ["--source"]:
        if len(words) < 2:
            raise CommandcodeError("--source needs a value", hint="/resume --source claude|pi|all [filter]")
        source, words = checked_source(words[1]), words[2:]
    current = shell.agent.session_id
    data = PickerData(shell.cwd, current_id=current, source=source)
    data.query = " ".join(words) if source != "commandcode" else args.strip()
    picked = shell.run_screen(PickerScreen(data))
    if picked is None:
        return
    picked = data.import_picked(picked)  # another agent's session: resumed as its import
    if picked.id == current:
        shell.notice("already in that session")
        return
    if picked.damaged and not picked.cwd:
        raise CommandcodeError(f"session {picked.id} cannot be opened: {picked.damaged}")
    plan = plan_picked(shell.cwd, picked, source="slash")
    from ...workspace.resume_place import resume_place

    _, place = resume_place(plan.files.transcript, shell.cwd)  # a worktree session runs in its worktree (run_dir)
    agent = open_plan(shell, plan)
    if agent is not None:
        shell.switch_to(agent, keep_grants=False)
        shell.notice(f"resumed {picked.name or picked.id}")
        if place:
            shell.notice(place)


COMMANDS = [SlashCommand("resume", run, "Pick a session to resume", aliases=("sessions",),
                         help="/resume [--source claude|pi|all] [filter] — opens the session picker (type to filter, "
                              "Enter resumes, Esc leaves; another agent's session is imported first)")]
