"""Resuming what a picker chose, for every front end: `plan_picked` makes the resume plan of a
session the picker returned (at launch, `-r` without a REF and `sessions pick`, and `/resume`
in a session); `checked_source` says whose sessions a picker may start with."""

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


def checked_source(source: str) -> str:
    """`source` when the picker knows it (`commandcode`, `claude`, `pi`, `all`).

    Raises:
        UsageError: another value.
    """
    if source == "commandcode":
        return source
    from ..interop.sources import check_source

    return check_source(source)
