"""`--no-session` leftovers (a meta and a checkpoints file without a transcript) are hidden from
listings unless asked for: `sessions list --all` shows them, marked, with their checkpoint count
and the path `commandcode rewind` takes; nothing is modified, and `--branch`/`--limit` apply."""

from __future__ import annotations

import json
import os
from pathlib import Path

from commandcode.config.paths import project_dir
from helpers.cli import run_cli, run_json, snapshot
from helpers.session_files import sid, write_session


def _leftover(workdir: Path, number: int, *, checkpoints: int, meta: dict[str, object] | None, when: int) -> Path:
    folder = project_dir(workdir)
    path = folder / f"{sid(number)}.checkpoints.jsonl"
    path.write_text("".join(json.dumps({"id": f"c{index}", "files": []}) + "\n" for index in range(checkpoints)))
    os.utime(path, (when, when))
    if meta is not None:
        (folder / f"{sid(number)}.meta.json").write_text(json.dumps(meta))
        os.utime(folder / f"{sid(number)}.meta.json", (when, when))
    return path


def test_all_shows_leftovers_marked_and_touches_nothing(home: Path, workdir: Path) -> None:
    write_session(workdir, sid(1), ["a real session"], when="2026-01-01T00:00:00.000Z")
    newer = _leftover(workdir, 8, checkpoints=2, meta={"title": "ghost run", "gitBranch": "main"}, when=1_800_000_000)
    _leftover(workdir, 9, checkpoints=1, meta=None, when=1_768_000_000)  # 2026-01-09
    before = snapshot(project_dir(workdir))
    assert [row["id"] for row in run_json(["sessions", "list", "--json"], workdir, home)] == [sid(1)]

    rows = run_json(["sessions", "list", "--all", "--json"], workdir, home)
    assert [row["id"] for row in rows] == [sid(8), sid(9), sid(1)]  # newest first, by the files' times
    ghost = rows[0]
    assert (ghost["leftover"], ghost["checkpoint_count"], ghost["message_count"]) == (True, 2, 0)
    assert (ghost["name"], ghost["git_branch"], ghost["path"]) == ("ghost run", "main", str(newer))
    assert "leftover" not in rows[2]
    assert [row["id"] for row in run_json(["sessions", "list", "--all", "--branch", "main", "--json"],
                                          workdir, home)] == [sid(8)]
    assert [row["id"] for row in run_json(["sessions", "list", "--all", "--limit", "1", "--json"],
                                          workdir, home)] == [sid(8)]

    table = run_cli(["sessions", "list", "--all"], workdir, home, COLUMNS="250")
    assert table.returncode == 0 and table.stderr == ""
    assert "no transcript: 2 checkpoint(s)" in table.stdout and "commandcode rewind" in table.stdout
    assert snapshot(project_dir(workdir)) == before
