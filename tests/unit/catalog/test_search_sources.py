"""`sessions search --source claude|pi|all`: Claude Code's (and pi's) sessions are searched
through their readers, with the same hit fields plus `source`; `all` merges every source newest
first; an unknown source is a usage error; the other agent's files are never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import assert_error_lines, run_cli, snapshot
from helpers.session_files import sid, write_claude_session, write_session

CLAUDE_ID = "c1a0de00-0000-4000-8000-000000000001"


def _search(args: list[str], cwd: Path, home: Path, claude: Path) -> list[dict[str, object]]:
    completed = run_cli(["sessions", "search", *args, "--json"], cwd, home, CLAUDE_CONFIG_DIR=str(claude))
    assert completed.returncode == 0, completed.stderr
    rows = json.loads(completed.stdout)
    assert isinstance(rows, list)
    return rows


def test_search_reads_claude_sessions_and_merges_all(home: Path, workdir: Path, tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    write_claude_session(claude, workdir, CLAUDE_ID, "where is the zeppelin hangar", "No hangar here.")
    write_session(workdir, sid(1), ["the zeppelin of our own"], when="2026-01-01T00:00:00.000Z")
    before = snapshot(claude)

    [hit] = _search(["zeppelin", "--source", "claude"], workdir, home, claude)
    assert (hit["session_id"], hit["entry_id"], hit["kind"], hit["source"]) == (CLAUDE_ID, "u1", "user", "claude")
    assert hit["timestamp"] == "2026-02-01T10:00:00.000Z"  # the helper's default time
    start, end = hit["spans"][0]  # type: ignore[index, misc]
    assert str(hit["snippet"])[start:end].lower() == "zeppelin"

    merged = _search(["zeppelin", "--source", "all"], workdir, home, claude)
    assert [(row["source"], row["session_id"]) for row in merged][:1] == [("claude", CLAUDE_ID)]
    assert ("commandcode", sid(1)) in [(row["source"], row["session_id"]) for row in merged]
    assert [row["session_id"] for row in _search(["zeppelin"], workdir, home, claude)] == [sid(1), sid(1)]
    assert _search(["hangar", "--source", "pi"], workdir, home, claude) == []
    assert snapshot(claude) == before

    text = run_cli(["sessions", "search", "hangar", "--source", "claude"], workdir, home, CLAUDE_CONFIG_DIR=str(claude))
    assert text.returncode == 0 and "hangar" in text.stdout and "[claude]" in text.stdout


@pytest.mark.parametrize("command", [["search", "x"], ["pick"]])
def test_an_unknown_source_is_a_usage_error(home: Path, workdir: Path, command: list[str]) -> None:
    completed = run_cli(["sessions", *command, "--source", "nope"], workdir, home)
    assert_error_lines(completed, error_contains="unknown source", exit_code=2)
