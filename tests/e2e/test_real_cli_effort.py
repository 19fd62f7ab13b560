"""Effort changes between the real Command Code CLI (1.64.0) and commandcode, both ways.

What the real CLI does (read in its `dist/cli.mjs`, and seen here): `/effort LEVEL` in its TUI,
for a model that declares reasoning levels, appends an `effort_change` entry to the open session
(`recordEffortChange`), and its session context's effort is the last `effort_change` on the path
(`buildSessionContext`); its `/tree` shows one as `[effort: LEVEL]` (with the tree filter at
"all"). A headless `--effort` is stored per model in its `config.json`, not in the session.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run_ok
from helpers.npm_programs import Programs
from helpers.real_cli import RealCli, keys, our_context, real_tui, same_context, sent_context, slash, wait_screen

pytestmark = [pytest.mark.npm, pytest.mark.slow, pytest.mark.terminal]

REASONER = "local/stub-reasoner"


def _effort_entries(transcript: Path) -> list[str]:
    return [entry["effort"] for entry in map(json.loads, transcript.read_text().splitlines())
            if entry.get("type") == "effort_change"]


def test_effort_changes_go_both_ways(npm_programs: Programs, tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    real = RealCli(npm_programs, home, cwd)
    data = real.data
    config = json.loads((data / "config.json").read_text())
    (data / "config.json").write_text(json.dumps({**config, "treeFilterMode": "all"}))
    run_ok(["-p", "hello at low effort", "--effort", "low", "-n", "Effort Ours"], cwd, data)
    [transcript] = [path for path in (data / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name]
    session = transcript.stem
    assert _effort_entries(transcript) == ["low"]
    with real_tui(real, cwd, session, tmp_path, model=REASONER) as name:
        wait_screen(name, "You said: hello at low effort")
        slash(name, "/tree")
        wait_screen(name, "[effort: low]")  # ours, read into its tree
        keys(name, "Escape")
        slash(name, "/effort high")
        wait_screen(name, "Reasoning effort set to high")
    assert _effort_entries(transcript) == ["low", "high"]  # its change, appended to our session
    shown = json.loads(run_ok(["sessions", "show", session, "--json"], cwd, data).stdout)
    assert shown["effort"] == "high" and shown["skipped_lines"] == []
    tree = json.loads(run_ok(["sessions", "tree", session, "--json"], cwd, data).stdout)
    assert [row["type"] for row in tree["entries"]].count("effort_change") == 2
    assert all(row["on_active_path"] for row in tree["entries"])
    # we go on at its effort: the next turn records it, with no change entry of its own
    run_ok(["-r", session, "-p", "our turn after its change"], cwd, data)
    entries = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert entries[-1]["message"]["role"] == "assistant" and entries[-1]["effort"] == "high"
    assert _effort_entries(transcript) == ["low", "high"]
    # and it rebuilds the same context from the whole session, effort changes and all
    same_context(our_context(session, cwd, data), sent_context(real("-r", session, "-p", "it resumes", model=REASONER)))
