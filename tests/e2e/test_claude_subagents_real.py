"""Claude Code's subagents as sub-agent runs (issue #28), on a session the real `claude` 2.1.332
wrote offline against the stub: its `Agent` call launches a subagent that itself calls `Write`;
`claude_subagent_runs` gives the run in the shape our own runs have, folded under the call, and
`import claude` writes it as a run of ours (`<id>/subagents/`, format §21), so `sessions show`,
the exports, fork, clone and `/tree` treat it as our runs and the real CLI still resumes the
session. An import made by the older code (the subagent as a hidden `custom` entry) still shows
in `/tree`."""

from __future__ import annotations

import json
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


def _imported(claude_with_subagent: dict[str, Any], data: Path) -> dict[str, Any]:
    from helpers.cli import run_cli

    done = run_cli(["import", "claude", str(claude_with_subagent["transcript"]), "--json"],
                   claude_with_subagent["proj"], data, HOME=str(claude_with_subagent["home"]))
    assert done.returncode == 0, done.stderr
    printed: dict[str, Any] = json.loads(done.stdout)
    return printed


def _agent_call(transcript: Path) -> str:
    """The id of the one `Agent` call of an imported session's transcript."""
    calls = [block["id"] for line in transcript.read_text(encoding="utf-8").splitlines()[1:]
             for block in (json.loads(line).get("message") or {}).get("content") or []
             if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Agent"]
    assert len(calls) == 1, calls
    return str(calls[0])


def test_import_writes_the_claude_subagent_as_a_run_of_ours(claude_with_subagent: dict[str, Any],
                                                             tmp_path: Path) -> None:
    """On ea0e990 the subagent was a `custom` entry of the transcript and no run was written."""
    from commandcode.sessions.files import SessionFiles
    from commandcode.sessions.reader import open_session
    from commandcode.sessions.subagent_runs import list_subagent_runs, read_run_meta, run_files

    printed = _imported(claude_with_subagent, tmp_path / "data")
    transcript = Path(printed["path"])
    files = SessionFiles.for_transcript(transcript)
    found = list_subagent_runs(files, with_messages=True)
    assert found.warnings == [] and len(found.runs) == 1 and printed["subagent_runs"] == 1
    [run] = found.runs
    [source] = (claude_with_subagent["transcript"].with_suffix("") / "subagents").glob("agent-*.jsonl")
    assert run.agent_id == source.stem[len("agent-"):] and run.tool_use_id == _agent_call(transcript)
    assert (run.source, run.agent_type, run.description, run.status) == (
        "commandcode", "general-purpose", "helper", "completed")
    assert Path(run.path) == transcript.with_suffix("") / "subagents" / f"agent-{run.agent_id}.jsonl"
    kinds = [(message["role"], [block["type"] for block in message["content"]]) for message in run.messages]
    assert kinds == [("user", ["text"]), ("assistant", ["tool_use"]), ("user", ["tool_result"]), ("assistant", ["text"])]
    assert run.messages[1]["content"][0]["name"] == "Write"
    assert json.loads(Path(run.path).read_text().splitlines()[0])["id"] == f"agent-{run.agent_id}"
    meta = read_run_meta(str(run_files(files, run.agent_id).meta))
    assert meta["importedFrom"] == {"tool": "claude", "path": str(source), "agentId": run.agent_id}
    assert '"custom"' not in transcript.read_text()  # the run is no entry of the session
    assert open_session(transcript).message_count == len(open_session(transcript).context().messages)
    for path in (transcript.parent / transcript.stem, Path(run.path).parent):
        assert path.stat().st_mode & 0o777 == 0o700
    for path in (Path(run.path), run_files(files, run.agent_id).meta):
        assert path.stat().st_mode & 0o777 == 0o600


def test_the_imported_run_is_shown_exported_forked_and_cloned_as_ours(claude_with_subagent: dict[str, Any],
                                                                       tmp_path: Path) -> None:
    from commandcode.sessions.files import SessionFiles
    from commandcode.sessions.subagent_runs import list_subagent_runs
    from helpers.cli import run_ok

    data, proj = tmp_path / "data", claude_with_subagent["proj"]
    printed = _imported(claude_with_subagent, data)
    session_id, call = printed["id"], _agent_call(Path(printed["path"]))
    lines = run_ok(["sessions", "show", session_id], proj, data).stdout.splitlines()
    block = lines[lines.index("sub-agent runs: 1"):]
    assert block[1] == f"  agent call {call}:"
    assert block[2].startswith("    sub-agent general-purpose: helper · completed · 4 messages")
    assert block[5] == "      assistant: tool call Write" and block[6] == "      user: tool result"
    md_path, html_path = tmp_path / "out.md", tmp_path / "out.html"
    run_ok(["export", session_id, "-f", "md", "-o", str(md_path)], proj, data)
    md = md_path.read_text(encoding="utf-8")
    run = md.index("<summary>Sub-agent general-purpose: helper · completed · 4 messages</summary>")
    assert md.index("<summary>AGENT helper</summary>") < run < md.index("<summary>WRITE sub.txt</summary>", run)
    run_ok(["export", session_id, "-f", "html", "-o", str(html_path)], proj, data)
    page = html_path.read_text(encoding="utf-8")
    [folded] = [match.start() for match in re.finditer('<details class="subagent"', page)]
    assert page.index('<span class="tool-input">helper</span>') < folded \
        < page.index('<span class="tool-input">sub.txt</span>', folded)
    for command in ("fork", "clone"):
        copy = json.loads(run_ok(["sessions", command, session_id, "--json"], proj, data).stdout)
        runs = list_subagent_runs(SessionFiles.for_transcript(copy["path"]), with_messages=True).runs
        assert [(r.tool_use_id, r.status, len(r.messages)) for r in runs] == [(call, "completed", 4)], command
    listed = json.loads(run_ok(["sessions", "list", "--json", "--all"], proj, data, COMMANDCODE_CATALOG="off").stdout)
    rows = listed["sessions"] if isinstance(listed, dict) else listed
    assert "agent-" not in json.dumps([row["id"] for row in rows]) and len(rows) == 3  # the import, its fork, its clone


def test_after_import_the_tree_folds_the_claude_subagent_under_its_call(claude_with_subagent: dict[str, Any],
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell's `/tree` (its model) names the imported run on the launching message's row, as
    it names our own runs: its status read from the run, not `imported`."""
    from commandcode.sessions.reader import open_session
    from commandcode.ui.tree_model import TreeModel

    data = tmp_path / "data"
    printed = _imported(claude_with_subagent, data)
    monkeypatch.setenv("COMMANDCODE_HOME", str(data))
    model = TreeModel(open_session(printed["path"]))
    texts = [text.text for text in model.texts(list(model.rows.order))]
    folded = [text for text in texts if "⤷ sub-agent" in text]
    assert len(folded) == 1 and folded[0].endswith("⤷ sub-agent general-purpose: helper · completed · 4 messages"), texts


def test_an_older_import_with_the_subagent_as_an_entry_still_shows_in_the_tree(
        claude_with_subagent: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ea0e990's import wrote (no run; a hidden `custom` entry under the launching message,
    its messages in `data`) reads as it did: the row names the subagent, `imported`."""
    import shutil

    from commandcode.interop.convert import SUBAGENT_TYPE
    from commandcode.sessions.reader import open_session
    from commandcode.ui.tree_model import TreeModel

    data = tmp_path / "data"
    printed = _imported(claude_with_subagent, data)
    transcript = Path(printed["path"])
    shutil.rmtree(transcript.with_suffix(""))
    lines = transcript.read_text(encoding="utf-8").splitlines()
    call = _agent_call(transcript)
    launcher = next(json.loads(line)["id"] for line in lines[1:] if call in line)
    old = {"type": "custom", "id": "0ldc0570", "parentId": launcher, "timestamp": json.loads(lines[1])["timestamp"],
           "customType": SUBAGENT_TYPE, "data": {"agent_id": "a1", "path": "/x/agent-a1.jsonl", "description": "helper",
                                                  "agent_type": "general-purpose", "tool_use_id": call, "messages": [
                                                      {"role": "user", "content": "do it"},
                                                      {"role": "assistant", "content": "done"}]}}
    transcript.write_text("\n".join([lines[0], json.dumps(old), *lines[1:]]) + "\n", encoding="utf-8")
    monkeypatch.setenv("COMMANDCODE_HOME", str(data))
    model = TreeModel(open_session(transcript))
    texts = [text.text for text in model.texts(list(model.rows.order))]
    folded = [text for text in texts if "⤷ sub-agent" in text]
    assert len(folded) == 1 and folded[0].endswith("⤷ sub-agent general-purpose: helper · imported · 2 messages"), texts


def test_the_real_cli_resumes_an_import_with_its_subagent_run(npm_programs: Programs,
                                                              claude_with_subagent: dict[str, Any],
                                                              tmp_path: Path) -> None:
    """The run beside the imported session is nothing the real CLI reads: it resumes the session,
    sends the context we rebuild, and writes no session of its own."""
    from helpers.real_cli import RealCli, our_context, same_context, sent_context

    proj = claude_with_subagent["proj"]
    real = RealCli(npm_programs, tmp_path / "home", proj)
    session = _imported(claude_with_subagent, real.data)["id"]
    ours = our_context(session, proj, real.data)
    same_context(ours, sent_context(real("-r", session, "-p", "continuing the import")))
    after = our_context(session, proj, real.data)
    assert after[-1] == ("assistant", "ok: continuing the import") and after[:len(ours)] == ours
    assert {path.name for path in (real.data / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name} \
        == {f"{session}.jsonl"}
