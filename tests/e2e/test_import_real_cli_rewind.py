"""The real Command Code CLI restores an imported Claude Code checkpoint (issue 32 §4): the
import writes the raw sha256 blob its `/rewind` verifies (`file-history/<id>/<sha256>`), under
the path Claude Code restores (`src/app.py`, not `src/src/app.py`); before, every item was
blake3-only and its restore failed verification. Driven in its TUI, in tmux, offline."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from helpers.cli import run_cli
from helpers.npm_programs import Programs
from helpers.real_cli import RealCli, keys, real_tui, screen_text, slash, wait_screen
from helpers.session_files import claude_backup_name, write_claude_checkpointed_session

pytestmark = [pytest.mark.npm, pytest.mark.slow, pytest.mark.terminal]
# today: the real CLI drops checkpoints older than its retention when it resumes a session
STAMP = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _claude_session(claude: Path, cwd: Path) -> Path:
    session_id = str(uuid.uuid4())
    name = claude_backup_name(cwd / "src" / "app.py")
    history = claude / "file-history" / session_id
    history.mkdir(parents=True)
    (history / name).write_bytes(b"before\n")
    return write_claude_checkpointed_session(claude, cwd, session_id, {"src/app.py": name}, when=STAMP)


def test_the_real_clis_rewind_restores_an_imported_checkpoint(npm_programs: Programs, tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    (cwd / "src").mkdir(parents=True)
    (cwd / "src" / "app.py").write_text("after\n")
    real = RealCli(npm_programs, tmp_path / "home", cwd)
    transcript = _claude_session(tmp_path / "claude", cwd)
    done = run_cli(["import", "claude", str(transcript), "--json"], cwd, real.data, CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout)["id"]
    with real_tui(real, cwd, session, tmp_path) as name:
        wait_screen(name, "edited it")  # the imported session, resumed and drawn
        slash(name, "/rewind")
        wait_screen(name, "Select a checkpoint")
        for _ in range(3):
            if "> edit app" in screen_text(name):
                break
            keys(name, "Up")
        wait_screen(name, "> edit app")
        keys(name, "Enter")
        wait_screen(name, "Code only")
        keys(name, "Down", "Down")
        wait_screen(name, "> Code only")
        keys(name, "Enter")
        wait_screen(name, "1 file restored")
    assert (cwd / "src" / "app.py").read_text() == "before\n"
    assert not (cwd / "src" / "src").exists()
