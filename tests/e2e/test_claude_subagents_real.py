"""Claude Code's subagents as sub-agent runs (issue #28), on a session the real `claude` 2.1.332
wrote offline against the stub: its `Agent` call launches a subagent that itself calls `Write`;
`claude_subagent_runs` gives the run in the shape our own runs have, folded under the call."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from commandcode.interop.claude_code import open_claude
from commandcode.interop.claude_subagents import claude_subagent_runs
from commandcode.interop.locations import claude_slug
from helpers.claude_real import ClaudeRun, write
from helpers.npm_programs import Programs
from helpers.subagents import directive

pytestmark = [pytest.mark.npm, pytest.mark.slow]


@pytest.fixture(scope="module")
def claude_with_subagent(npm_programs: Programs, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("claude-subagent")
    home, proj = root / "home", root / "proj"
    home.mkdir()
    proj.mkdir()
    call = directive("Agent", {"description": "helper", "prompt": write(str(proj / "sub.txt"), "by the subagent"),
                               "subagent_type": "general-purpose"})  # the sub-agent's prompt: a Write directive
    ClaudeRun(npm_programs, home, root / "requests.jsonl")(proj, "-p", "spawn " + call)
    [transcript] = (home / ".claude" / "projects" / claude_slug(str(proj))).glob("*.jsonl")
    return {"home": home, "proj": proj, "transcript": transcript}


def test_a_claude_subagent_is_a_run_folded_under_its_agent_call(claude_with_subagent: dict[str, Any],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(claude_with_subagent["home"]))
    assert (claude_with_subagent["proj"] / "sub.txt").read_text() == "by the subagent"
    session = open_claude(claude_with_subagent["transcript"])
    runs = claude_subagent_runs(session)
    assert runs.warnings == [] and len(runs.runs) == 1
    run = runs.runs[0]
    calls = [block for message in session.messages if message["role"] == "assistant"
             for block in message["content"] if block.get("type") == "tool_use" and block.get("name") == "Agent"]
    assert [call["id"] for call in calls] == [run.tool_use_id] and runs.by_tool_use() == {run.tool_use_id: [run]}
    assert (run.source, run.agent_type, run.description, run.status) == ("claude", "general-purpose", "helper", "completed")
    assert Path(run.path) == claude_with_subagent["transcript"].with_suffix("") / "subagents" / f"agent-{run.agent_id}.jsonl"
    assert run.started is not None and run.finished is not None and run.started <= run.finished
    kinds = [(message["role"], [block["type"] for block in message["content"]]) for message in run.messages]
    assert kinds == [("user", ["text"]), ("assistant", ["tool_use"]), ("user", ["tool_result"]), ("assistant", ["text"])]
    assert run.messages[1]["content"][0]["name"] == "Write" and run.message_count == 4


def test_a_missing_subagent_file_is_a_warning_not_a_failure(claude_with_subagent: dict[str, Any], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(claude_with_subagent["transcript"].parent, copy)
    transcript = copy / claude_with_subagent["transcript"].name
    for path in (transcript.with_suffix("") / "subagents").glob("*.jsonl"):
        path.unlink()
    monkeypatch.setenv("HOME", str(claude_with_subagent["home"]))
    runs = claude_subagent_runs(open_claude(transcript))
    assert runs.runs == [] and len(runs.warnings) == 1 and "was launched but its file" in runs.warnings[0]


def test_sessions_show_folds_the_claude_subagent_under_its_call(claude_with_subagent: dict[str, Any],
                                                                tmp_path: Path) -> None:
    from helpers.cli import run_cli

    shown = run_cli(["sessions", "show", str(claude_with_subagent["transcript"]), "--source", "claude"],
                    claude_with_subagent["proj"], tmp_path / "data", HOME=str(claude_with_subagent["home"]))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    block = lines[lines.index("sub-agent runs: 1"):]
    assert block[1].startswith("  agent call ") and block[1].endswith(":")
    assert block[2].startswith("    sub-agent general-purpose: helper · completed · 4 messages")
    assert block[4].startswith("      user: ") and block[5] == "      assistant: tool call Write"
    assert block[6] == "      user: tool result" and "subagents: 1" in lines


def test_the_md_export_folds_the_claude_subagent_under_its_call(claude_with_subagent: dict[str, Any],
                                                                tmp_path: Path) -> None:
    from helpers.cli import run_cli

    out = tmp_path / "out.md"
    done = run_cli(["export", str(claude_with_subagent["transcript"]), "--source", "claude", "-f", "md", "-o", str(out)],
                   claude_with_subagent["proj"], tmp_path / "data", HOME=str(claude_with_subagent["home"]))
    assert done.returncode == 0, done.stderr
    md = out.read_text(encoding="utf-8")
    call = md.index("<summary>AGENT helper</summary>")
    run = md.index("<summary>Sub-agent general-purpose: helper · completed · 4 messages</summary>")
    assert call < run < md.index("<summary>WRITE sub.txt</summary>", run)  # the subagent's own Write, inside
    assert str(claude_with_subagent["proj"]) not in md


def test_the_html_export_folds_the_claude_subagent_under_its_call(claude_with_subagent: dict[str, Any],
                                                                  tmp_path: Path) -> None:
    from helpers.cli import run_cli

    out = tmp_path / "out.html"
    done = run_cli(["export", str(claude_with_subagent["transcript"]), "--source", "claude", "-f", "html", "-o",
                    str(out)], claude_with_subagent["proj"], tmp_path / "data", HOME=str(claude_with_subagent["home"]))
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    call = page.index('<span class="tool-input">helper</span>')
    [run] = [match.start() for match in re.finditer('<details class="subagent"', page)]
    assert call < run < page.index('<span class="tool-input">sub.txt</span>', run)  # the subagent's own Write, inside
    assert ('<span class="subagent-badge">Sub-agent general-purpose</span><span class="subagent-description">helper'
            '</span><span class="subagent-status">completed · 4 messages</span>') in page
    assert str(claude_with_subagent["proj"]) not in page


def test_after_import_the_tree_folds_the_claude_subagent_under_its_call(claude_with_subagent: dict[str, Any],
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`import claude` keeps the subagent as a hidden `custom` entry under the launching message;
    the shell's `/tree` (its model) names it on that message's row, as it names our own runs."""
    import json

    from commandcode.sessions.reader import open_session
    from commandcode.ui.tree_model import TreeModel
    from helpers.cli import run_cli

    data = tmp_path / "data"
    done = run_cli(["import", "claude", str(claude_with_subagent["transcript"]), "--json"], claude_with_subagent["proj"],
                   data, HOME=str(claude_with_subagent["home"]))
    assert done.returncode == 0, done.stderr
    monkeypatch.setenv("COMMANDCODE_HOME", str(data))
    model = TreeModel(open_session(json.loads(done.stdout)["path"]))
    texts = [text.text for text in model.texts(list(model.rows.order))]
    folded = [text for text in texts if "⤷ sub-agent" in text]
    assert len(folded) == 1 and folded[0].endswith("⤷ sub-agent general-purpose: helper · imported · 4 messages"), texts
