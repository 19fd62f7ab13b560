"""`SessionFiles`: the files that belong to one session, named from its transcript (format §1).

The session id is the transcript's file name (never the header's `id`, format §2); the meta,
checkpoints, share and legacy-backup sidecars sit beside it, and so does a fork's recovery record
while the disk may not hold its body (`.<sid>.jsonl.unsynced`, format §4.8: its name is owned here,
`unsynced.py` owns what is in it). String-based, so a warm open builds no `Path`, and imports no
`config.paths` (the `Path` properties do, when first asked for).
"""

import os

from ..config import TRANSCRIPT_SUFFIX
from ..values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

UNSYNCED_RECORD_SUFFIX = TRANSCRIPT_SUFFIX + ".unsynced"


class SessionFiles(Frozen):
    """The files that belong to one session; the session id is the transcript's file name.

    The folder is kept as a string (`folder`); `directory` and the sidecar properties are `Path`s.
    """

    __slots__ = ("folder", "session_id")
    folder: str
    session_id: str

    def __init__(self, directory: "str | os.PathLike[str]", session_id: str) -> None:
        folder = os.fspath(directory)
        self._set(folder=folder.rstrip(os.sep) or folder, session_id=session_id)  # "a/b/" is "a/b", as Path has it

    @classmethod
    def for_transcript(cls, transcript: "str | os.PathLike[str]") -> "SessionFiles":
        """The files of the session whose transcript is `transcript`."""
        folder, name = os.path.split(os.fspath(transcript))
        session_id = name[: -len(TRANSCRIPT_SUFFIX)] if name.endswith(TRANSCRIPT_SUFFIX) else name
        return cls(folder or ".", session_id)

    @property
    def directory(self) -> "Path":
        from ..config.paths import as_path

        return as_path(self.folder)

    def sidecar_path(self, suffix: str) -> str:
        """`<folder>/<session id><suffix>` as a string."""
        return os.path.join(self.folder, self.session_id + suffix)

    @property
    def unsynced_record(self) -> str:
        """The recovery record of a fork whose body the disk may not hold yet, as a string (the
        reader looks for it with one `lstat` on every open): `<folder>/.<sid>.jsonl.unsynced`."""
        return os.path.join(self.folder, "." + self.session_id + UNSYNCED_RECORD_SUFFIX)

    @staticmethod
    def session_of_unsynced_record(name: str) -> "str | None":
        """The session id whose recovery record is named `name` (a folder's entry), or None for
        any other name."""
        if name.startswith(".") and name.endswith(UNSYNCED_RECORD_SUFFIX) and len(name) > 1 + len(UNSYNCED_RECORD_SUFFIX):
            return name[1:-len(UNSYNCED_RECORD_SUFFIX)]
        return None

    def _sidecar(self, suffix: str) -> "Path":
        from ..config.paths import as_path

        return as_path(self.sidecar_path(suffix))

    @property
    def transcript(self) -> "Path":
        return self._sidecar(".jsonl")

    @property
    def meta(self) -> "Path":
        return self._sidecar(".meta.json")

    @property
    def checkpoints(self) -> "Path":
        return self._sidecar(".checkpoints.jsonl")

    @property
    def share(self) -> "Path":
        return self._sidecar(".share.json")

    @property
    def legacy_backup(self) -> "Path":
        return self._sidecar(".v2.bak")

    @property
    def file_history(self) -> "Path":
        """The real CLI's per-session raw sha256 backup folder."""
        from ..config.paths import file_history_dir

        return file_history_dir(self.session_id)
