"""Where a session lives and what it may touch: the git branch it started on, the folder a rewind
of it may write into (never more than the project its transcript is filed under), and the notices
`-c` gives when it passes over sessions it cannot open."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..config.paths import sessions_folder
from ..sessions.files import SessionFiles
from ..sessions.format import read_header_cwd


def git_branch(cwd: Path) -> str | None:
    """The current git branch of `cwd` (also a branch with no commits yet), or None outside a
    repository and on a detached HEAD."""
    try:
        completed = subprocess.run(["git", "symbolic-ref", "--quiet", "--short", "HEAD"], cwd=cwd, capture_output=True,
                                   text=True, timeout=5, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    branch = completed.stdout.strip()
    return branch if completed.returncode == 0 and branch else None


def session_folder(files: SessionFiles) -> Path:
    """The folder outside of which a rewind of this session writes nothing: the transcript
    header's `cwd` when it is the project the session is filed under (an absolute, normalised
    path whose slug is the name of the transcript's folder), else the current directory. A header
    can be forged or copied: one that claims `/` must not open the whole disk to its checkpoints."""
    recorded = read_header_cwd(files.sidecar_path(".jsonl"))
    if recorded is not None and is_own_project(recorded, files):
        return Path(recorded)
    return Path.cwd()


def is_own_project(cwd: str, files: SessionFiles) -> bool:
    if "\x00" in cwd or not os.path.isabs(cwd) or os.path.normpath(cwd) != cwd:
        return False
    return os.path.basename(sessions_folder(cwd)) == os.path.basename(files.folder)  # a long slug's folder is cut


def skipped_newer(chosen: SessionFiles | None, unreadable: list[tuple[Path, str]]) -> list[str]:
    """Which sessions `-c` passed over because they cannot be opened, when they are newer than the
    one it continues (or it found none): the user may have meant one of those."""
    try:
        floor = chosen.transcript.stat().st_mtime if chosen is not None else float("-inf")
    except OSError:
        floor = float("-inf")
    notices = []
    for path, reason in unreadable:
        try:
            newer = path.stat().st_mtime >= floor
        except OSError:
            newer = True
        if newer:
            continues = f"continuing {chosen.session_id}" if chosen is not None else "not continuing it"
            notices.append(f"-c skipped the newer session {path.name[:-len('.jsonl')]}: {reason}; {continues}")
    return notices
