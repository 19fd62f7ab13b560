"""Where other agents keep their sessions, and how they name a project's folder.

- Claude Code: `$CLAUDE_CONFIG_DIR`, else `~/.claude`; transcripts in `projects/<slug>/<id>.jsonl`
  where the slug is the absolute cwd with every character outside `[A-Za-z0-9]` replaced by `-`;
  a slug over 200 characters is cut at 200 and given `-<hash>` (the hash is the program's own,
  so a long slug is found by its first 200 characters and the `cwd` its entries record).
  Backups in `file-history/<session id>/<name>@v<n>`.
- pi: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`; sessions in
  `sessions/--<cwd with / \\ : replaced by ->--/<time>_<id>.jsonl`.

Reading only: nothing here creates a folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

CLAUDE_SLUG_LIMIT = 200
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def claude_home() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def claude_projects() -> Path:
    return claude_home() / "projects"


def claude_file_history(session_id: str) -> Path:
    return claude_home() / "file-history" / session_id


def claude_slug(cwd: str) -> str:
    """The folder name for `cwd` when it fits (over 200 characters: its first 200 only)."""
    return _NOT_ALNUM.sub("-", cwd)


def claude_project_dirs(cwd: str) -> list[Path]:
    """The project folders that may hold `cwd`'s sessions (one, or the long-slug candidates)."""
    slug = claude_slug(cwd)
    root = claude_projects()
    if len(slug) <= CLAUDE_SLUG_LIMIT:
        return [root / slug]
    prefix = slug[:CLAUDE_SLUG_LIMIT] + "-"
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [root / name for name in names if name.startswith(prefix)]


def pi_agent_dir() -> Path:
    configured = os.environ.get("PI_CODING_AGENT_DIR", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".pi" / "agent"


def pi_sessions() -> Path:
    return pi_agent_dir() / "sessions"


def pi_folder_name(cwd: str) -> str:
    """pi's folder for a cwd: `--` + the path without its leading separator, `/ \\ :` → `-`, `--`."""
    stripped = cwd.lstrip("/\\")
    return "--" + re.sub(r"[/\\:]", "-", stripped) + "--"
