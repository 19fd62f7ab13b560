"""The resume picker as a service for every front end: `pick_session(cwd)` runs the picker
full-screen and returns the plan of the picked session (`agent.resume.ResumePlan`, which resumes
it in its own directory), or None when the user leaves. The shell's `-r` without a REF and
`commandcode sessions pick` call this; `/resume` runs the same screen through `Shell.run_screen`.
Textual is imported only here, when a picker opens."""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..agent.resume import ResumePlan
    from ..catalog.summary import SessionSummary


def plan_picked(cwd: Path, picked: SessionSummary, *, source: str = "picker",
                model_override: str | None = None) -> ResumePlan:
    """The resume plan of a session the picker returned (`source`: "picker" at launch, "slash" in a session)."""
    from ..agent.resume import plan_resume
    from ..sessions.files import SessionFiles

    return plan_resume(cwd, files=SessionFiles.for_transcript(picked.path), source=source,
                       model_override=model_override)


def pick_session(cwd: Path, *, all_projects: bool = False, current_id: str | None = None,
                 model_override: str | None = None, source: str = "commandcode") -> ResumePlan | None:
    """Runs the picker in the terminal; the picked session's plan, or None. `source` is whose
    sessions it starts with (another agent's session picked is imported first).

    Raises:
        UsageError: an unknown source.
        CommandcodeError: the picked session of another agent could not be imported.
    """
    from .screens.picker_data import FIRST_PAINT, PickerData

    data = PickerData(cwd, current_id=current_id, scope="projects" if all_projects else "directory",
                      source=checked_source(source))
    data.prefetch(FIRST_PAINT)  # read (the GIL mostly released) while Textual is imported and starts
    from .app import run_screen
    from .screens.picker import PickerScreen

    picked = run_screen(PickerScreen(data))
    if picked is None:
        return None
    return plan_picked(cwd, data.import_picked(picked), model_override=model_override)


def checked_source(source: str) -> str:
    """`source` when the picker knows it (`commandcode`, `claude`, `pi`, `all`).

    Raises:
        UsageError: another value.
    """
    if source == "commandcode":
        return source
    from ..interop.sources import check_source

    return check_source(source)
