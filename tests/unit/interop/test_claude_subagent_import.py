"""The subagents `import claude` cannot write as runs (format §19): one whose id a run cannot
carry (`[A-Za-z0-9_-]{1,80}`), one that holds no message, and one whose file cannot be read, are
each left out with one warning line, and the others are still imported as runs; nothing of
theirs is written. Hand-made Claude Code files of the 2.1.332 shape (the real program never
writes these cases); the good subagent is what `test_claude_subagents_real.py` checks whole."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from commandcode.interop.claude_code import open_claude
from commandcode.interop.importer import import_session
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.subagent_runs import list_subagent_runs, subagents_dir

SID = "0b5e5e1e-0000-4000-8000-000000000002"


def _entry(kind: str, uuid: str, parent: str | None, cwd: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SID, "cwd": cwd,
            "version": "2.1.332", "isSidechain": False, "timestamp": "2026-01-02T03:04:05.000Z", **fields}


def _lines(path: Path, entries: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries))


def _subagent(folder: Path, agent_id: str, call: str, cwd: str, *, messages: bool = True) -> None:
    sidechain = {"isSidechain": True, "agentId": agent_id}
    entries = [_entry("user", f"{agent_id}-u", None, cwd, message={"role": "user", "content": "sub task"}, **sidechain),
               _entry("assistant", f"{agent_id}-a", f"{agent_id}-u", cwd, **sidechain,
                      message={"id": f"m-{agent_id}", "role": "assistant", "model": "claude-x",
                               "content": [{"type": "text", "text": "sub done"}]})] if messages else [
        {"type": "queue-operation", "operation": "enqueue", "sessionId": SID}]
    _lines(folder / f"agent-{agent_id}.jsonl", entries)
    (folder / f"agent-{agent_id}.meta.json").write_text(json.dumps(
        {"agentType": "general-purpose", "description": f"task {agent_id}", "toolUseId": call, "finished": True}))


def test_subagents_that_cannot_be_runs_are_left_out_with_a_warning_each(home: Path, tmp_path: Path) -> None:
    cwd = str(tmp_path / "proj")
    transcript = tmp_path / "claude" / f"{SID}.jsonl"
    folder = transcript.with_suffix("") / "subagents"
    folder.mkdir(parents=True)
    calls = [{"type": "tool_use", "id": f"toolu_{name}", "name": "Agent", "input": {"description": name, "prompt": "x"}}
             for name in ("good", "dotted", "empty", "locked")]
    _lines(transcript, [
        _entry("user", "u1", None, cwd, message={"role": "user", "content": "spawn them"}),
        _entry("assistant", "a1", "u1", cwd, message={"id": "m1", "role": "assistant", "model": "claude-x",
                                                      "content": calls}),
        _entry("user", "r1", "a1", cwd, message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call["id"], "content": "done"} for call in calls]})])
    _subagent(folder, "agood", "toolu_good", cwd)
    _subagent(folder, "a.dotted", "toolu_dotted", cwd)
    _subagent(folder, "aempty", "toolu_empty", cwd, messages=False)
    _subagent(folder, "alocked", "toolu_locked", cwd)
    os.chmod(folder / "agent-alocked.jsonl", 0)  # unreadable (the suite runs as root too: then a folder)
    if os.access(folder / "agent-alocked.jsonl", os.R_OK):
        (folder / "agent-alocked.jsonl").unlink()
        (folder / "agent-alocked.jsonl").mkdir()
    result = import_session(open_claude(transcript))
    files = SessionFiles.for_transcript(result.path)
    found = list_subagent_runs(files)
    assert [(run.agent_id, run.tool_use_id, run.status) for run in found.runs] == [("agood", "toolu_good", "completed")]
    assert found.warnings == [] and result.runs == 1
    assert sorted(os.listdir(subagents_dir(files))) == ["agent-agood.jsonl", "agent-agood.meta.json"]
    left_out = [line for line in result.warnings if "left out" in line or "cannot read" in line]
    assert len(left_out) == 3, result.warnings
    assert any("'a.dotted'" in line and "not an id a sub-agent run can have" in line for line in left_out)
    assert any(line.startswith("subagent aempty: no message to import") for line in left_out)
    assert any(line.startswith("subagent alocked: cannot read") for line in left_out)
    assert all("\n" not in line for line in result.warnings)
