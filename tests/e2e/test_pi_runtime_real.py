"""pi's own agent runtime (its CLI in print mode) run offline against the stub OpenAI-compatible
server (a `models.json` provider pointing at it, its own network namespace): the session files it
writes are read by us as pi rebuilds them, which is what it sends the model when it continues."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commandcode.interop.pi import open_pi
from helpers.cli import run_ok, snapshot
from helpers.npm_programs import OfflineRun, Programs, run_offline
from helpers.stub_models import chat_context, message_kinds

pytestmark = [pytest.mark.npm, pytest.mark.slow]

MODELS = {"providers": {"stub": {"baseUrl": "{STUB}/v1", "api": "openai-completions", "apiKey": "stub",
                                 "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                                 "models": [{"id": "stub-model"}]}}}


def pi(programs: Programs, agent: Path, cwd: Path, log: Path, *args: str) -> OfflineRun:
    models = agent / "models.json"
    models.write_text(json.dumps(MODELS))
    env = {"HOME": str(agent.parent), "PI_CODING_AGENT_DIR": str(agent), "OFFLINE_RUN_TEMPLATES": str(models),
           "PATH": f"{programs.node.parent}:/usr/bin:/bin", **programs.node_env()}
    return run_offline([str(programs.node), str(programs.pi_package / "dist" / "cli.js"), "--provider", "stub",
                        "--model", "stub-model", *args], cwd=cwd, env=env, log=log, timeout=180).check()


def test_pi_runtime_sessions_are_read_as_pi_continues_them(npm_programs: Programs, tmp_path: Path, home: Path) -> None:
    agent, cwd = tmp_path / "pi-home" / "agent", tmp_path / "proj"
    agent.mkdir(parents=True)
    cwd.mkdir()
    pi(npm_programs, agent, cwd, tmp_path / "1.jsonl", "-p", 'write [[tool write {"path": "a.txt", "content": "A\\n"}]]')
    assert (cwd / "a.txt").read_text() == "A\n"
    pi(npm_programs, agent, cwd, tmp_path / "2.jsonl", "-c", "-p", "second turn")
    [path] = list((agent / "sessions").glob("*/*.jsonl"))
    session = open_pi(path)
    assert session.warnings == [] and session.model == "stub-model"
    before = snapshot(agent)
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    ours = message_kinds(json.loads(run_ok(["sessions", "context", session.id, "--source", "pi", "--json"], cwd,
                                           home, **env).stdout)["messages"])
    assert [kind for kind, _ in ours] == ["user", "tool_use", "tool_result", "assistant", "user", "assistant"]
    continued = pi(npm_programs, agent, cwd, tmp_path / "3.jsonl", "-c", "-p", "third turn")
    body = next(request["body"] for request in continued.requests if request["path"].endswith("/chat/completions"))
    sent = chat_context(body)[:-1]
    assert [kind for kind, _ in sent] == [kind for kind, _ in ours]
    for (_, mine), (_, theirs) in zip(ours, sent):
        assert mine in theirs
    assert snapshot(agent) != before  # pi appended; our reads never did (checked in the reader tests)
    imported = json.loads(run_ok(["import", "pi", session.id, "--json"], cwd, home, **env).stdout)
    context = json.loads(run_ok(["sessions", "context", imported["id"], "--json"], cwd, home).stdout)["messages"]
    assert [kind for kind, _ in message_kinds(context)][:6] == [kind for kind, _ in ours]
