"""Where commandcode keeps data: the real CLI's `~/.commandcode` tree, plus our own folders.

The data dir is `$COMMANDCODE_HOME` when set, else `$HOME/.commandcode` (then `USERPROFILE`,
then the OS home), so commandcode works on a real user's existing sessions. Beside the real
CLI's folders we add `objects/` (the shared blake3+zstd backup store), `locks/` (writer locks)
and `index/` (index sidecars); the real CLI ignores all three.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .slug import project_slug

TRANSCRIPT_SUFFIX = ".jsonl"
_NOT_TRANSCRIPT_MARKERS = (".checkpoints.", ".prompts.", ".v2.bak")


def data_dir() -> Path:
    """The root of all session data."""
    override = os.environ.get("COMMANDCODE_HOME")
    if override:
        return Path(override)
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or str(Path.home())
    return Path(home) / ".commandcode"


def projects_dir() -> Path:
    """`<data dir>/projects`: one folder per project slug."""
    return data_dir() / "projects"


def project_dir(cwd: str | os.PathLike[str]) -> Path:
    """The project folder for a working directory (the real CLI's slug of the absolute cwd)."""
    return projects_dir() / project_slug(os.fspath(cwd))


def objects_dir() -> Path:
    """`<data dir>/objects`: content-addressed backup objects shared by every session."""
    return data_dir() / "objects"


def locks_dir() -> Path:
    """`<data dir>/locks`: one lock file per transcript open for writing."""
    return data_dir() / "locks"


def index_dir() -> Path:
    """`<data dir>/index`: index sidecars (a cache; safe to delete)."""
    return data_dir() / "index"


def is_transcript_name(name: str) -> bool:
    """The real CLI's rule: ends in `.jsonl` and is no checkpoints/prompts/backup sidecar."""
    return name.endswith(TRANSCRIPT_SUFFIX) and not any(marker in name for marker in _NOT_TRANSCRIPT_MARKERS)


@dataclass(frozen=True)
class SessionFiles:
    """The files that belong to one session; the session id is the transcript's file name."""

    directory: Path
    session_id: str

    @classmethod
    def for_transcript(cls, transcript: Path) -> SessionFiles:
        """The files of the session whose transcript is `transcript`."""
        name = transcript.name
        session_id = name[: -len(TRANSCRIPT_SUFFIX)] if name.endswith(TRANSCRIPT_SUFFIX) else name
        return cls(transcript.parent, session_id)

    def _sidecar(self, suffix: str) -> Path:
        return self.directory / f"{self.session_id}{suffix}"

    @property
    def transcript(self) -> Path:
        return self._sidecar(".jsonl")

    @property
    def meta(self) -> Path:
        return self._sidecar(".meta.json")

    @property
    def checkpoints(self) -> Path:
        return self._sidecar(".checkpoints.jsonl")

    @property
    def share(self) -> Path:
        return self._sidecar(".share.json")

    @property
    def legacy_backup(self) -> Path:
        return self._sidecar(".v2.bak")

    @property
    def file_history(self) -> Path:
        """The real CLI's per-session raw sha256 backup folder."""
        return data_dir() / "file-history" / self.session_id
