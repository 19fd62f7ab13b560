"""How the real Command Code CLI 1.64.0 records a sub-agent run (issue #28, docs/format.md §21),
found by running it offline against the stub (helpers/subagents.py builds the prompts that make
the stub call `agent`, and the sub-agent call tools): it stores no transcript of the run at all,
records the `agent` call and its result text in the parent, and backs up nothing the sub-agent
wrote in the parent's checkpoint. And both ways: we read the session it wrote (context as it
rebuilds it), and it resumes a session of ours that holds our sub-agent runs beside it, both
runs our writer made and runs our runner made from a turn against the same stub."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from commandcode.sessions.files import SessionFiles
from commandcode.sessions.subagent_runs import list_subagent_runs
from helpers.npm_programs import Programs
from helpers.real_cli import RealCli, our_context, ours_offline, same_context, sent_context, shared_home
from helpers.subagent_prompts import launched_pattern
from helpers.subagents import AGENT_ID, directive, write_run
from helpers.trees import branched_session

pytestmark = [pytest.mark.npm, pytest.mark.slow]

USAGE = r"<usage>total_tokens: \d+\ntool_uses: 1\nturns: 2\nduration_ms: \d+</usage>"
GENERAL_PROMPT_START = "You are a general-purpose autonomous agent."


@pytest.fixture
def shared(npm_programs: Programs, tmp_path: Path) -> tuple[RealCli, Path, Path]:
    return shared_home(npm_programs, tmp_path)


def _entries(data: Path) -> tuple[Path, list[dict[str, object]]]:
    [transcript] = [path for path in (data / "projects").glob("*/*.jsonl") if path.name.count(".") == 1]
    return transcript, [json.loads(line) for line in transcript.read_text().splitlines()]


def _tool_results(entries: list[dict[str, object]]) -> list[str]:
    texts = []
    for entry in entries:
        message = entry.get("message")
        for block in message.get("content", []) if isinstance(message, dict) else []:
            if block.get("type") == "tool_result":
                texts.append("".join(part["text"] for part in block["content"]))
    return texts


def test_the_real_cli_keeps_no_run_transcript_and_records_call_and_result(shared: tuple[RealCli, Path, Path]) -> None:
    real, cwd, data = shared
    inner = directive("write_file", {"file_path": str(cwd / "b.txt"), "content": "from the sub-agent\n"})
    run = real("-p", "delegate " + directive("agent", {"description": "Write b", "subagent_type": "general",
                                                       "prompt": inner}))
    assert (cwd / "b.txt").read_text() == "from the sub-agent\n"
    transcript, entries = _entries(data)
    sid = transcript.stem
    # no file of the run anywhere: only the session's three files (and the config we wrote)
    made = sorted(str(path.relative_to(data)) for path in data.rglob("*") if path.is_file())
    assert made == ["config.json", f"projects/{transcript.parent.name}/{sid}.checkpoints.jsonl",
                    f"projects/{transcript.parent.name}/{sid}.jsonl", f"projects/{transcript.parent.name}/{sid}.meta.json",
                    "providers.json"]
    calls = [block for entry in entries if isinstance(entry.get("message"), dict)
             for block in entry["message"]["content"] if block.get("type") == "tool_use"]  # type: ignore[index]
    assert [(call["name"], call["input"]) for call in calls] == [
        ("agent", {"description": "Write b", "subagent_type": "general",
                   "prompt": f'[[tool write_file {{"file_path": "{cwd / "b.txt"}", "content": "from the sub-agent\\n"}}]]'})]
    [result] = _tool_results(entries)
    assert re.fullmatch(r"done with the tools\n\n" + USAGE, result), result
    # the sub-agent's write is in no checkpoint of the parent
    [record] = [json.loads(line) for line in (transcript.parent / f"{sid}.checkpoints.jsonl").read_text().splitlines()]
    assert record["files"] == []
    # the sub-agent's own requests: the bundled prompt, every tool but the spawn tools
    chats = [request["body"] for request in run.requests if request["path"].endswith("/chat/completions")]
    sub = [body for body in chats if body["messages"][0]["content"].startswith(GENERAL_PROMPT_START)]
    assert len(sub) == 2
    tools = {tool["function"]["name"] for tool in sub[0]["tools"]}
    assert "write_file" in tools and not tools & {"agent", "agent_output"}
    # we read its session as it rebuilds it, and find no runs beside it
    assert list_subagent_runs(SessionFiles.for_transcript(transcript)).runs == []
    same_context(our_context(sid, cwd, data), sent_context(real("-r", sid, "-p", "after the sub-agent")))


def test_a_background_run_and_agent_output_wait(shared: tuple[RealCli, Path, Path]) -> None:
    real, cwd, data = shared
    (cwd / "a.txt").write_text("hello\n")
    inner = directive("read_file", {"file_path": str(cwd / "a.txt")})
    real("-p", "bg " + directive("agent", {"description": "Read a", "subagent_type": "explore", "prompt": inner,
                                           "run_in_background": True})
         + " " + directive("agent_output", {"agent_id": AGENT_ID, "action": "wait"}, then=True))
    _, entries = _entries(data)
    launched, waited = _tool_results(entries)
    match = re.fullmatch(launched_pattern("bg-1-[0-9a-f]{8}"), launched)
    assert match, launched
    assert re.fullmatch(rf"agent_id: {match.group(1)}\nagent: explore\ndescription: Read a\nstatus: completed\n\n"
                        r"done with the tools\n\n" + USAGE, waited), waited
    assert not list((data / "projects").glob("*/*/subagents"))


def test_the_real_cli_resumes_a_session_holding_our_runs(home: Path, shared: tuple[RealCli, Path, Path]) -> None:
    real, cwd, data = shared
    assert home == data  # our writer and the real CLI share the data dir
    files, _ = branched_session(cwd)
    run = write_run(files, str(cwd), tool_use_id="t4", reply="our sub-agent's reply")
    kept = {path: path.read_bytes() for path in Path(files.folder, files.session_id).rglob("*") if path.is_file()}
    same_context(our_context(files.session_id, cwd, data), sent_context(real("-r", files.session_id, "-p", "go on")))
    assert {path: path.read_bytes() for path in kept} == kept  # the runs are left as they were
    assert [r.agent_id for r in list_subagent_runs(files).runs] == [run.agent_id]
    sessions = [path.stem for path in (data / "projects").glob("*/*.jsonl") if path.name.count(".") == 1]
    assert sessions == [files.session_id]  # it made no session of a run


def test_the_real_cli_resumes_a_session_our_runner_made_runs_in(shared: tuple[RealCli, Path, Path],
                                                                tmp_path: Path) -> None:
    real, cwd, data = shared
    (cwd / "a.txt").write_text("hello\n")
    read = directive("read_file", {"file_path": str(cwd / "a.txt")})
    write = directive("write_file", {"file_path": str(cwd / "b.txt"), "content": "from our run\n"})
    ours_offline(real, cwd, tmp_path / "ours.log", "-p", "delegate "
                 + directive("agent", {"description": "Read a", "subagent_type": "explore", "prompt": read})
                 + " " + directive("agent", {"description": "Write b", "prompt": write, "run_in_background": True})
                 + " " + directive("agent_output", {"agent_id": AGENT_ID}, then=True))
    assert (cwd / "b.txt").read_text() == "from our run\n"
    transcript, entries = _entries(data)
    files = SessionFiles.for_transcript(transcript)
    runs = list_subagent_runs(files).runs
    assert sorted((run.agent_type, run.status, run.background) for run in runs) == [
        ("explore", "completed", False), ("general", "completed", True)]
    read_result, launched, waited = _tool_results(entries)
    assert re.fullmatch(r"done with the tools\n\n" + USAGE, read_result), read_result
    assert launched.startswith("Background agent launched.") and "status: completed" in waited
    kept = {path: path.read_bytes() for path in Path(files.folder, files.session_id).rglob("*") if path.is_file()}
    same_context(our_context(files.session_id, cwd, data), sent_context(real("-r", files.session_id, "-p", "go on")))
    assert {path: path.read_bytes() for path in kept} == kept  # the runs are left as they were
    sessions = [path.stem for path in (data / "projects").glob("*/*.jsonl") if path.name.count(".") == 1]
    assert sessions == [files.session_id]  # it made no session of a run


def test_the_real_cli_p_does_not_wait_for_a_background_run(shared: tuple[RealCli, Path, Path],
                                                           tmp_path: Path) -> None:
    """Where we differ on purpose: the real CLI 1.64.0 ends `-p` with its turn, and a background
    run still going is cut (its command never finishes); ours waits for it (cli/headless.py).
    The same prompt against the same stub, both programs; the command's own sleeps stay under the
    real CLI's 2 s guard on a leading `sleep`."""
    real, cwd, _ = shared
    late = cwd / "late.txt"
    prompt = "bg " + directive("agent", {"description": "Late write", "run_in_background": True, "prompt": directive(
        "shell_command", {"command": f"sleep 1.5; sleep 1.5; echo late > {late}"})})
    real("-p", prompt)
    time.sleep(4)  # the command would be done by now, had it gone on
    assert not late.exists()
    ours_prompt = prompt.replace("shell_command", "bash")
    ours_offline(real, cwd, tmp_path / "ours.log", "--yolo", "-p", ours_prompt)
    assert late.read_text() == "late\n"  # our -p returned only once the run was done
