"""Sub-agent runs in headless `python -m commandcode -p` processes (issue #28): with the offline
model (foreground, parallel and background runs, the runs' files, the parent's checkpoint, the
fold in `sessions show`, a background run still going when `-p` ends), and against a stub
OpenAI-compatible server on 127.0.0.1 (the requests a run sends: its agent's prompt, its
tools, never the spawn tools; two `agent` calls of one reply run in parallel)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from commandcode.sessions.files import SessionFiles
from commandcode.sessions.subagent_runs import list_subagent_runs
from helpers.cli import only_transcript, run_cli, run_ok
from helpers.openai_stub import write_providers
from helpers.stub_models import stub_model_server
from helpers.subagent_prompts import agent_call, call, dangling_calls, run_metas, tool_results
from helpers.subagents import AGENT_ID, directive

GENERAL_PROMPT_START = "You are a general-purpose autonomous agent."


def test_a_headless_turn_runs_foreground_parallel_and_background_runs(home: Path, workdir: Path) -> None:
    prompt = "\n".join([
        agent_call(call("write_file", file_path="a.txt", content="one\n"), description="Write a"),
        agent_call(call("write_file", file_path="b.txt", content="two\n"), description="Write b", also=True),
        agent_call(call("edit_file", file_path="a.txt", old_string="one", new_string="uno"), description="Edit a",
                   run_in_background=True),
        call("agent_output", agent_id="{{agent_id}}"),
    ])
    completed = run_ok(["-p", prompt], workdir, home)
    assert "Ran 4 tool call(s)" in completed.stdout and completed.stderr == ""
    assert (workdir / "a.txt").read_text() == "uno\n" and (workdir / "b.txt").read_text() == "two\n"
    transcript = only_transcript(home, workdir)
    files = SessionFiles.for_transcript(transcript)
    assert {meta["description"]: (meta["status"], meta["background"]) for meta in run_metas(files).values()} == {
        "Write a": ("completed", False), "Write b": ("completed", False), "Edit a": ("completed", True)}
    wrote_a, wrote_b, launched, waited = tool_results(transcript)
    assert "File created successfully" in wrote_a and "File created successfully" in wrote_b
    assert launched.startswith("Background agent launched.") and "status: completed" in waited
    assert dangling_calls(transcript) == []
    # every file the runs wrote is in the parent's checkpoint of that turn
    [record] = [json.loads(line) for line in transcript.with_suffix(".checkpoints.jsonl").read_text().splitlines()]
    assert sorted(Path(item["path"]).name for item in record["files"]) == ["a.txt", "b.txt"]
    # `sessions show` folds each run under its call
    shown = run_ok(["sessions", "show", files.session_id], workdir, home).stdout
    assert "sub-agent runs: 3" in shown and shown.count("agent call call_0000_") == 3
    assert "sub-agent general: Edit a · completed" in shown


def test_a_background_run_still_going_when_the_headless_turn_ends_is_stopped_with_one_line(
        home: Path, workdir: Path) -> None:
    prompt = agent_call(call("bash", command="sleep 60"), description="Forever", run_in_background=True)
    completed = run_cli(["--yolo", "-p", prompt], workdir, home)
    assert completed.returncode == 0, completed.stderr
    [line] = completed.stderr.splitlines()
    match = re.fullmatch(r"(?:warning: )?stopped 1 running sub-agent \((bg-1-[0-9a-f]{8})\)", line)
    assert match, line
    files = SessionFiles.for_transcript(only_transcript(home, workdir))
    assert run_metas(files)[match.group(1)]["status"] == "killed"
    [run] = list_subagent_runs(files).runs
    assert dangling_calls(run.path) == []  # the stopped command's step is whole


def test_runs_against_an_openai_compatible_server(home: Path, workdir: Path) -> None:
    (workdir / "a.txt").write_text("hello\n")
    read = directive("read_file", {"file_path": str(workdir / "a.txt")})
    write = directive("write_file", {"file_path": str(workdir / "b.txt"), "content": "from the run\n"})
    prompt = ("delegate " + directive("agent", {"description": "Read a", "subagent_type": "explore", "prompt": read})
              + " " + directive("agent", {"description": "Write b", "prompt": write, "run_in_background": True})
              + " " + directive("agent_output", {"agent_id": AGENT_ID}, then=True))
    with stub_model_server() as stub:
        write_providers(home, stub.url + "/v1", api_key=False)
        completed = run_ok(["--model", "local/stub-model", "--permission-mode", "acceptEdits", "-p", prompt],
                           workdir, home)
    assert "done with the tools" in completed.stdout
    assert (workdir / "b.txt").read_text() == "from the run\n"
    bodies = [body for path, body in stub.requests if path.endswith("/chat/completions")]
    parent = [body for body in bodies if body["messages"][0]["content"].startswith("You are Command Code")]
    runs = [body for body in bodies if not body["messages"][0]["content"].startswith("You are Command Code")]
    assert {"agent", "agent_output"} <= {tool["function"]["name"] for tool in parent[0]["tools"]}
    explore = [body for body in runs if body["messages"][0]["content"].startswith("You are a")
               and "explor" in body["messages"][0]["content"].lower()]
    general = [body for body in runs if body["messages"][0]["content"].startswith(GENERAL_PROMPT_START)]
    assert explore and general
    assert [tool["function"]["name"] for tool in explore[0]["tools"]] == ["read_file"]
    assert not {"agent", "agent_output"} & {tool["function"]["name"] for tool in general[0]["tools"]}
    transcript = only_transcript(home, workdir)
    read_result, launched, waited = tool_results(transcript)
    assert re.fullmatch(r"done with the tools\n\n<usage>total_tokens: \d+\ntool_uses: 1\nturns: 2\n"
                        r"duration_ms: \d+</usage>", read_result), read_result
    assert launched.startswith("Background agent launched.\nagent_id: bg-2-")
    assert "description: Write b\nstatus: completed" in waited
    runs_stored = list_subagent_runs(SessionFiles.for_transcript(transcript), with_messages=True).runs
    assert sorted((run.agent_type, run.status) for run in runs_stored) == [("explore", "completed"),
                                                                         ("general", "completed")]
    assert all(run.model == "local/stub-model" for run in runs_stored)
