"""`commandcode export --source claude|pi REF`: another agent's session as an html page, a
markdown file or a Command Code JSONL, by the same renderers as our own sessions.

The session is converted as `import` would convert it (`convert.py`) into a throwaway folder
that is removed afterwards, and exported from there, so the selections (`context`, `full`,
`all`), redaction and the target rules are exactly those of `export.document`. Nothing is
written into the source tree: a target that is the source transcript itself is refused. A
`jsonl` export is the converted session (what the real Command Code CLI and commandcode read);
the source's own file is already a JSONL copy of itself. A Claude Code session's subagents are
folded under the call that started each in html and md, as our own sub-agent runs are.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..export.document import ExportResult, export_for
from ..export.select import Progress
from .foreign import ForeignSession
from .materialize import write_throwaway

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config.context import ProjectContext


def export_foreign(session: ForeignSession, project: ProjectContext, *, path: str | None = None, fmt: str | None = None,
                   selection: str = "context", redact_jsonl: bool = False,
                   progress: Progress | None = None) -> ExportResult:
    """Writes `session` to `path` (else the default name in `project.cwd`) in `fmt` (see the module docstring).

    Raises:
        UsageError: a bad format, extension or selection.
        CommandcodeError: nothing to export, or a target that cannot be used (the source itself).
        OSError: the target cannot be written (it was left as it was).
    """
    from .claude_code import ClaudeSession

    runs = None
    if isinstance(session, ClaudeSession):
        from .claude_subagents import claude_subagent_runs

        runs = claude_subagent_runs(session).by_tool_use()
    with tempfile.TemporaryDirectory(prefix="commandcode-export-") as folder:
        transcript = write_throwaway(session, Path(folder))
        return export_for(transcript, transcript.stem, project, path=path, fmt=fmt, selection=selection,
                          redact_jsonl=redact_jsonl, progress=progress, protect=session.path, runs=runs)
