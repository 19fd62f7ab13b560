"""`commandcode sessions relink REF` and `commandcode sessions pick`: moving a session whose
directory is gone, and the full-screen resume picker, on the command line."""

from __future__ import annotations

import os
from pathlib import Path

from ..agent.resume import plan_resume
from ..errors import CommandcodeError
from ..present.console import handle_errors, safe, stdout


@handle_errors
def relink_view(ref: str) -> None:
    """Moves a session whose working directory no longer exists to this directory's project."""
    cwd = Path(os.getcwd())
    plan = plan_resume(cwd, reference=ref)
    if plan.missing_cwd is None:
        where = plan.recorded_cwd or "its directory"
        raise CommandcodeError(f"session {plan.files.session_id}'s directory {where} still exists; not relinking it",
                               hint=f"resume it there: cd {where} && commandcode -r {plan.files.session_id}")
    old = plan.missing_cwd
    before = plan.files.folder
    plan.relink()
    if plan.files.folder == before:
        stdout.print(f"session {safe(plan.files.session_id, one_line=True)} is already filed under "
                     f"{safe(os.fspath(cwd), one_line=True)}")
        return
    stdout.print(f"relinked session {safe(plan.files.session_id, one_line=True)} from {safe(old, one_line=True)} "
                 f"to {safe(os.fspath(cwd), one_line=True)}")


@handle_errors
def pick_view(all_projects: bool = False, source: str = "commandcode") -> None:
    """Opens the resume picker; prints the picked session's id and directory (for scripts:
    `cd "$(…)"`), or nothing when the picker is left with Escape. Another agent's session
    picked (`--source claude|pi|all`) is imported first; the import's id is printed."""
    from ..ui.picker_service import pick_session

    picked = pick_session(Path(os.getcwd()), all_projects=all_projects, source=source)
    if picked is not None:
        stdout.print(f"{safe(picked.files.session_id, one_line=True)}\t{safe(os.fspath(picked.run_dir), one_line=True)}")
