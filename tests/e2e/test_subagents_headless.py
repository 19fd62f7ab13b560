"""Sub-agent runs in headless `python -m commandcode -p` processes (issue #28): with the offline
model (foreground, parallel and background runs, the runs' files, the parent's checkpoint, the
fold in `sessions show` and the md export; background runs still going when the turn ends are
waited for, each end told in a line and in the result, one that did not complete fails the run,
Ctrl+C stops them; what they would have to ask is refused, as for the parent), and against a stub
OpenAI-compatible server on 127.0.0.1 (the requests a run sends: its agent's prompt, its
tools, never the spawn tools). A kill -9 in the middle of a run leaves whole steps in both
transcripts and a run that reads `interrupted`."""

from __future__ import annotations

import json
import os
import re
import select
import signal
from pathlib import Path

import jsonschema

from commandcode.sessions.files import SessionFiles
from commandcode.sessions.subagent_runs import list_subagent_runs
from helpers.cli import entries, kill_group, only_transcript, run_cli, run_ok, start_cli, wait_for
from helpers.locations import REPO
from helpers.openai_stub import write_providers
from helpers.stub_models import stub_model_server
from helpers.subagent_prompts import agent_call, call, dangling_calls, run_metas, tool_results
from helpers.subagents import AGENT_ID, directive

GENERAL_PROMPT_START = "You are a general-purpose autonomous agent."
VALIDATOR = jsonschema.Draft202012Validator(json.loads((REPO / "docs" / "headless-schema.json").read_text()))


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
    out = workdir.parent / "session.md"
    run_ok(["export", files.session_id, "-f", "md", "-o", str(out)], workdir, home)
    md = out.read_text()
    for description, messages in (("Write a", 4), ("Write b", 4), ("Edit a", 4)):
        assert f"<summary>Sub-agent general: {description} · completed · {messages} messages</summary>" in md


def test_headless_waits_for_a_background_run_and_says_how_it_ended(home: Path, workdir: Path) -> None:
    """The turn ends with the run still going: `-p` waits for it (the file it writes late is
    there when `-p` exits), one line says it waits, one says how the run ended; a run the model
    collected (`agent_output`) is not told again."""
    prompt = "\n".join([
        agent_call(call("write_file", file_path="early.txt", content="early\n"), description="Collected",
                   run_in_background=True),
        call("agent_output", agent_id="{{agent_id}}"),
        agent_call(call("bash", command="sleep 1; echo late > late.txt"), description="Late write",
                   run_in_background=True),
    ])
    completed = run_cli(["--yolo", "-p", prompt, "--output-format", "json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    assert (workdir / "late.txt").read_text() == "late\n"
    waiting, ended = completed.stderr.splitlines()
    match = re.fullmatch(r"waiting for 1 background sub-agent to finish \((bg-2-[0-9a-f]{8})\); Ctrl\+C stops them",
                         waiting)
    assert match, waiting
    assert ended == f"sub-agent general {match.group(1)} completed · Late write"
    result = json.loads(completed.stdout)
    VALIDATOR.validate(result)
    assert result["is_error"] is False and result["background_agents"] == [
        {"agent_id": match.group(1), "subagent_type": "general", "description": "Late write", "status": "completed",
         "error": None}]
    files = SessionFiles.for_transcript(only_transcript(home, workdir))
    assert {meta["description"]: meta["status"] for meta in run_metas(files).values()} == {
        "Collected": "completed", "Late write": "completed"}


def test_a_background_run_that_does_not_complete_fails_the_headless_run(home: Path, workdir: Path) -> None:
    """A background run cut by its agent's turn limit: the reply still prints (text), the line
    says how it ended, and the run exits 1 with one error line; as json the result is an error."""
    agents = workdir / ".commandcode" / "agents"
    agents.mkdir(parents=True)
    (agents / "short.md").write_text('---\nname: short\ndescription: stops early\ntools: "*"\nmaxTurns: 1\n'
                                     "background: true\n---\nYou stop early.\n")
    prompt = agent_call(call("bash", command="echo one > one.txt"), call("bash", command="echo two > two.txt"),
                        description="Two steps", subagent_type="short")
    completed = run_cli(["--yolo", "-p", prompt], workdir, home)
    assert completed.returncode == 1, completed.stderr
    assert "agent: Background agent launched." in completed.stdout
    assert (workdir / "one.txt").exists() and not (workdir / "two.txt").exists()
    waiting, ended, error, hint = completed.stderr.splitlines()
    agent_id = re.search(r"\((bg-1-[0-9a-f]{8})\)", waiting).group(1)  # type: ignore[union-attr]
    assert ended == f"sub-agent short {agent_id} stopped at its turn limit · Two steps"
    assert error == f"error: 1 background sub-agent did not complete: {agent_id} stopped at its turn limit"
    assert hint.startswith("hint: its transcript is kept with the session: commandcode sessions show ")
    as_json = run_cli(["-c", "--yolo", "-p", prompt, "--output-format", "json"], workdir, home)
    assert as_json.returncode == 1
    result = json.loads(as_json.stdout)
    VALIDATOR.validate(result)
    assert result["is_error"] is True and result["subtype"] == "error_during_execution"
    assert result["result"].startswith("Error: 1 background sub-agent did not complete: bg-2-")
    assert result["reply"] and "Background agent launched." in result["reply"]  # the reply is not lost
    assert [run["status"] for run in result["background_agents"]] == ["max_turns"]


def test_ctrl_c_while_headless_waits_stops_the_runs(home: Path, workdir: Path) -> None:
    started = workdir / "started"
    prompt = agent_call(call("bash", command=f"touch {started}; sleep 60"), description="Forever",
                        run_in_background=True)
    process = start_cli(["--yolo", "-p", prompt], workdir, home)
    try:
        assert process.stderr is not None
        seen = b""  # read from the descriptor itself: `communicate` reads it that way too
        while b"Ctrl+C stops them\n" not in seen:  # the turn has ended: `-p` waits
            ready, _, _ = select.select([process.stderr], [], [], 60)
            assert ready, seen
            chunk = os.read(process.stderr.fileno(), 4096)
            assert chunk, seen
            seen += chunk
        wait_for(started.exists, timeout=60, what="the background run's command")
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl+C: the whole group
        _, rest = process.communicate(timeout=60)
    finally:
        kill_group(process)
    stderr = seen.decode() + rest
    assert process.returncode == 130, stderr
    waiting, stopped = stderr.splitlines()
    match = re.fullmatch(r"waiting for 1 background sub-agent to finish \((bg-1-[0-9a-f]{8})\); Ctrl\+C stops them",
                         waiting)
    assert match, waiting
    assert re.fullmatch(rf"(?:warning: )?stopped 1 running sub-agent \({match.group(1)}\)", stopped), stopped
    files = SessionFiles.for_transcript(only_transcript(home, workdir))
    assert run_metas(files)[match.group(1)]["status"] == "killed"
    [run] = list_subagent_runs(files).runs
    assert dangling_calls(run.path) == []  # the stopped command's step is whole


def test_a_headless_background_run_is_refused_what_would_be_asked(home: Path, workdir: Path) -> None:
    """Nobody can answer in `-p`: a background run meets the parent's headless rule (refused
    with the tool error that says how to allow it), and the run still completes."""
    prompt = agent_call(call("bash", command="touch asked.txt"), description="Needs asking", run_in_background=True)
    completed = run_cli(["-p", prompt], workdir, home)
    assert completed.returncode == 0, completed.stderr
    assert not (workdir / "asked.txt").exists()
    assert completed.stderr.splitlines()[-1].endswith("completed · Needs asking")
    [run] = list_subagent_runs(SessionFiles.for_transcript(only_transcript(home, workdir))).runs
    [refused] = tool_results(run.path)
    assert "permission needed: bash: touch asked.txt was not run; nobody can approve it in a headless run" in refused


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


def test_a_kill_9_mid_run_leaves_whole_steps_and_an_interrupted_run(home: Path, workdir: Path) -> None:
    started = workdir / "started"
    prompt = agent_call(call("write_file", file_path="a.txt", content="step one\n"),
                        call("bash", command=f"touch {started}; sleep 60"), description="Killed")
    run_ok(["-p", "hello"], workdir, home)  # the session is on disk; the killed turn is its second
    process = start_cli(["-c", "--yolo", "-p", prompt], workdir, home)
    try:
        wait_for(started.exists, timeout=60, what="the run's second step")
    finally:
        kill_group(process)
    files = SessionFiles.for_transcript(only_transcript(home, workdir))
    [run] = list_subagent_runs(files, with_messages=True).runs
    assert run.status == "interrupted" and run.description == "Killed"  # `running` in its meta, no writer alive
    assert [message["role"] for message in run.messages] == ["user", "assistant", "user"]  # its first step, whole
    assert dangling_calls(run.path) == []
    assert dangling_calls(files.transcript) == []  # the parent's turn was never half committed
    assert [entry["message"]["content"][0]["text"] for entry in entries(files.transcript)
            if entry["type"] == "message" and entry["message"]["role"] == "user"] == ["hello"]
    shown = run_ok(["sessions", "show", files.session_id], workdir, home).stdout
    assert "sub-agent general: Killed · interrupted" in shown


def test_a_malformed_agent_file_is_one_warning_line_and_the_others_load(home: Path, workdir: Path) -> None:
    agents = workdir / ".commandcode" / "agents"
    agents.mkdir(parents=True)
    broken = agents / "broken.md"
    broken.write_bytes(b"---\nname: [broken\n---\nbody\n")
    (agents / "good.md").write_text('---\nname: good\ndescription: fine\ntools: "*"\n---\nYou are good.\n')
    prompt = agent_call(call("write_file", file_path="g.txt", content="g\n"), description="Good one",
                        subagent_type="good")
    completed = run_cli(["--yolo", "-p", prompt], workdir, home)
    assert completed.returncode == 0, completed.stderr
    [warning] = completed.stderr.splitlines()
    assert warning.startswith(f"warning: agent file {broken} ignored: invalid YAML"), warning
    assert (workdir / "g.txt").read_text() == "g\n" and broken.read_bytes() == b"---\nname: [broken\n---\nbody\n"
