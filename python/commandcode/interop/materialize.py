"""A foreign session written as a Command Code v3 session: the files `import` leaves in the data
dir, and the throwaway copy the commands that read a transcript (`export --source claude|pi`)
work on.

`session_lines` and `session_meta` are the one place that says what a converted session's
transcript and meta hold (header, `convert()`'s entries; `importedFrom`, title, model, git
branch); `write_throwaway` writes them into a folder the caller owns (a temporary one), under
the source's own session id, so what is shown names the session the user asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..sessions.format import build_header
from ..storage.durable import atomic_write
from ..storage.ids import iso_now
from ..storage.jsonfmt import dumps_line, dumps_pretty
from .convert import Converted
from .foreign import ForeignSession


def session_lines(session_id: str, session: ForeignSession, converted: Converted) -> bytes:
    """The transcript of the converted session: its header, then the entries, one line each."""
    header = build_header(session_id, session.created, session.cwd)
    lines = [dumps_line(header), *(dumps_line(entry) for entry in converted.entries)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def session_meta(session: ForeignSession, converted: Converted) -> dict[str, Any]:
    """The meta of the converted session: lineage, and the title, model and branch it had."""
    meta: dict[str, Any] = {"importedFrom": {"tool": session.source, "path": str(session.path),
                                             "sessionId": session.id, "importedAt": iso_now()}}
    if session.name:
        meta["title"] = session.name
    if converted.model:
        meta["model"] = converted.model
    if session.git_branch:
        meta["gitBranch"] = session.git_branch
    return meta


def write_throwaway(session: ForeignSession, folder: Path) -> Path:
    """`session` converted into `folder` (`<id>.jsonl` and `<id>.meta.json`); its transcript path.

    Raises:
        CommandcodeError: the session holds no message to show.
        OSError: `folder` cannot be written.
    """
    from ..errors import CommandcodeError
    from ..sessions.files import SessionFiles
    from .convert import convert

    converted = convert(session)
    if not converted.entries:
        raise CommandcodeError(f"{session.path}: the {session.source} session holds no message")
    safe_id = session.id if session.id and "/" not in session.id and not session.id.startswith(".") else "session"
    files = SessionFiles(str(folder), safe_id)
    atomic_write(files.meta, dumps_pretty(session_meta(session, converted)).encode("utf-8"))
    atomic_write(files.transcript, session_lines(safe_id, session, converted))
    return Path(files.transcript)
