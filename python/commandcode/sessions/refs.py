"""The quick ways a reference names a session: a transcript path, or an exact id of this project.

String-based (no `pathlib`, no catalog), so opening a session by path or id costs no more than
the open itself. `catalog.resolve_session` tries this first, then names, other projects and id
prefixes.
"""

from __future__ import annotations

import os

from ..config.paths import is_transcript_name, sessions_folder
from ..errors import SessionNotFoundError
from .files import SessionFiles


def resolve_direct(reference: str, cwd: str) -> SessionFiles | None:
    """The session `reference` names directly (stripped already), or None to search further.

    A reference ending in `.jsonl` that is an existing file is a transcript path (a sidecar
    there is an error); else an id whose transcript is in this project's folder.

    Raises:
        SessionNotFoundError: the path is a session sidecar, not a transcript.
    """
    if reference.endswith(".jsonl"):
        as_path = os.path.expanduser(reference)
        if os.path.isfile(as_path):
            if not is_transcript_name(os.path.basename(os.path.normpath(as_path))):
                raise SessionNotFoundError(f"{reference} is a session sidecar, not a transcript",
                                           hint="pass the session's .jsonl transcript, its id or its name")
            return SessionFiles.for_transcript(os.path.realpath(as_path))
    if "/" in reference:
        return None
    folder = sessions_folder(cwd)
    if os.path.isfile(os.path.join(folder, reference + ".jsonl")):
        return SessionFiles(folder, reference)
    return None
