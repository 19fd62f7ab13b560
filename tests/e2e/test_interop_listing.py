"""`sessions list --source claude|all` on damaged sessions the real Claude Code wrote: a torn
line and a missing backup are listed, marked `damaged` as our own damaged sessions are, with one
`warning:` line pointing at `sessions show`; clean sessions are not marked; nothing is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_cli, snapshot

pytestmark = [pytest.mark.npm]


def test_a_damaged_session_is_listed_with_a_warning(claude_home: dict[str, Any], home: Path, tmp_path: Path) -> None:
    copy = tmp_path / "home" / ".claude"
    shutil.copytree(claude_home["home"] / ".claude", copy)
    first = copy / "projects" / claude_home["first"].parent.name / claude_home["first"].name
    with first.open("ab") as handle:
        handle.write(b'{"type":"user","uuid":"torn')
    env = {"HOME": str(tmp_path / "home"), "COLUMNS": "250"}
    proj = claude_home["proj"]
    clean = json.loads(run_cli(["sessions", "list", "--source", "claude", "--json"], claude_home["proj"], home,
                               HOME=str(claude_home["home"])).stdout)
    assert clean and all(row["damaged"] is None and row["warnings"] == [] for row in clean)
    listed = run_cli(["sessions", "list", "--source", "claude", "--json"], proj, home, **env)
    assert listed.returncode == 0, listed.stderr
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert set(rows) == {row["id"] for row in clean}  # nothing hidden
    damaged = rows[first.stem]
    assert damaged["damaged"] == "1 unreadable line(s) skipped" and damaged["skipped_lines"] == 1
    # a missing backup: a warning of the session, and the listing says so
    history = copy / "file-history" / first.stem
    sorted(history.iterdir())[0].unlink()
    before = snapshot(copy)
    text = run_cli(["sessions", "list", "--source", "all"], proj, home, **env)
    assert text.returncode == 0 and "Traceback" not in text.stderr
    assert "[damaged: 1 unreadable line(s) skipped; 1 warning(s)]" in text.stdout
    assert text.stderr.startswith("warning: ") and "--source claude` lists them" in text.stderr
    shown = json.loads(run_cli(["sessions", "show", first.stem, "--source", "claude", "--json"], proj, home,
                               **env).stdout)
    assert any("missing" in warning for warning in shown["warnings"])
    assert snapshot(copy) == before
