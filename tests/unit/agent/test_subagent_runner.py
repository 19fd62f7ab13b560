"""Sub-agent runs from a session's turns (issue #28, agent/subagents/): the `agent` and
`agent_output` tools driven by the offline model through `AgentSession`, in-process, with real
files, real threads and real `bash` processes. Foreground, parallel and background runs, the
scratchpad, the session's grants, and every bad input: a tool error the model sees, or an error
result with both transcripts whole."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from commandcode.agent.permissions import Grants, PermissionAnswer, PermissionRequest
from commandcode.agent.runtime import AgentSession
from commandcode.sessions.subagent_runs import list_subagent_runs, read_run_meta, run_files
from helpers.subagent_prompts import agent_call, call, dangling_calls, launched_pattern, run_metas, tool_results

USAGE = r"<usage>total_tokens: \d+\ntool_uses: (\d+)\nturns: (\d+)\nduration_ms: \d+</usage>"



def _agent_file(here: Path, name: str, front: str, body: str = "You are a test agent.") -> None:
    folder = here / ".commandcode" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\nname: {name}\n{front}---\n{body}\n")


def _started(agent: AgentSession) -> list[Path]:
    """The meta files of the runs started so far (a run's transcript appears with its first step)."""
    return sorted(Path(agent.files.folder, agent.session_id, "subagents").glob("*.meta.json"))


def _whole(agent: AgentSession) -> None:
    """Neither the parent nor any run holds a call without its result."""
    assert dangling_calls(agent.files.transcript) == []
    for run in list_subagent_runs(agent.files).runs:
        assert dangling_calls(run.path) == [], run.agent_id


def test_a_foreground_run_is_the_calls_result_and_is_stored_beside_the_session(here: Path) -> None:
    with AgentSession.start(here, entrypoint="print") as agent:
        result = agent.turns.run_turn(agent_call(call("write_file", file_path="b.txt", content="from the run\n"),
                                                 description="Write b", subagent_type="general"))
    assert result.error is None and (here / "b.txt").read_text() == "from the run\n"
    [text] = tool_results(agent.files.transcript)
    match = re.fullmatch(r"Ran 1 tool call\(s\):\n- write_file: File created successfully at: .*b\.txt\n\n" + USAGE, text)
    assert match and match.groups() == ("1", "2"), text
    [run] = list_subagent_runs(agent.files, with_messages=True).runs
    assert (run.agent_type, run.description, run.status, run.background) == ("general", "Write b", "completed", False)
    assert re.fullmatch(r"fg-1-[0-9a-f]{8}", run.agent_id) and run.tool_use_id == "call_0000_000"
    assert [message["role"] for message in run.messages] == ["user", "assistant", "user", "assistant"]
    assert run.messages[0]["content"][0]["text"].startswith("call write_file")
    _whole(agent)


def test_two_calls_of_one_step_run_in_parallel(here: Path) -> None:
    # each run marks itself, then waits for the other's mark: run one after the other, the first
    # would wait alone until its bound and say `alone`
    def meet(me: str, other: str) -> str:
        return call("bash", command=f"touch {me}.mark; for i in $(seq 300); do [ -e {other}.mark ] && "
                                    f"echo met-{me} && exit 0; sleep 0.1; done; echo alone-{me}")

    prompt = "\n".join([agent_call(meet("a", "b"), description="A"),
                        agent_call(meet("b", "a"), description="B", also=True)])
    with AgentSession.start(here, entrypoint="print", permission_mode="bypassPermissions") as agent:
        agent.turns.run_turn(prompt)
    first, second = tool_results(agent.files.transcript)
    assert "bash: met-a" in first and "bash: met-b" in second, (first, second)
    assert sorted(run.description or "" for run in list_subagent_runs(agent.files).runs) == ["A", "B"]
    _whole(agent)


def test_background_runs_and_agent_output(here: Path) -> None:
    prompt = "\n".join([
        agent_call(call("write_file", file_path="c.txt", content="bg\n"), description="C", run_in_background=True),
        call("agent_output", agent_id="{{agent_id}}"),  # wait (the default)
        agent_call(call("bash", command="sleep 60"), description="Slow", run_in_background=True),
        call("agent_output", agent_id="{{agent_id}}", action="status"),
        call("agent_output", agent_id="{{agent_id}}", action="kill"),
        call("agent_output", agent_id="{{agent_id}}", action="wait"),
        call("agent_output"),
        call("agent_output", agent_id="bg-9-00000000"),
        call("agent_output", agent_id="{{agent_id}}", action="peek"),
    ])
    with AgentSession.start(here, entrypoint="print", permission_mode="bypassPermissions") as agent:
        agent.turns.run_turn(prompt)
    launched, waited, launched_slow, status, kill, killed, listing, unknown, bad_action = tool_results(
        agent.files.transcript)
    first = re.fullmatch(launched_pattern("bg-1-[0-9a-f]{8}"), launched)
    assert first, launched
    assert re.fullmatch(rf"agent_id: {first.group(1)}\nagent: general\ndescription: C\nstatus: completed\n\n"
                        r"Ran 1 tool call\(s\):\n- write_file: .*\n\n" + USAGE, waited), waited
    slow = re.search(r"agent_id: (bg-2-[0-9a-f]{8})", launched_slow)
    assert slow is not None
    assert re.fullmatch(rf"agent_id: {slow.group(1)}\nagent: general\ndescription: Slow\nstatus: running\n"
                        r"running for \d+ms", status), status
    assert kill == f"Kill signal sent to {slow.group(1)}."
    assert "status: killed" in killed and "[sub-agent interrupted before finishing]" in killed
    assert listing == f"{first.group(1)} [completed] general: C\n{slow.group(1)} [killed] general: Slow"
    assert unknown == "Unknown background agent: bg-9-00000000"
    assert bad_action.startswith("Error: agent_output's action must be one of wait, status, kill")
    metas = run_metas(agent.files)
    assert {meta["description"]: meta["status"] for meta in metas.values()} == {"C": "completed", "Slow": "killed"}
    assert all(meta["background"] is True for meta in metas.values())
    _whole(agent)


def test_runs_share_the_parents_scratchpad_silently(here: Path) -> None:
    # default mode, headless: a write into the scratchpad is never asked about, in the run as in the parent
    prompt = "\n".join([
        agent_call(call("write_file", file_path="$COMMANDCODE_SCRATCHPAD/notes.txt", content="handed over\n")),
        call("read_file", file_path="$COMMANDCODE_SCRATCHPAD/notes.txt"),
    ])
    with AgentSession.start(here, entrypoint="print") as agent:
        agent.turns.run_turn(prompt)
        pad = agent.turns.tool_space().scratchpad
    assert pad is not None and Path(pad.path, "notes.txt").read_text() == "handed over\n"
    ran, read = tool_results(agent.files.transcript)
    assert "File created successfully" in ran and "1: handed over" in read


def test_the_sessions_grants_and_asker_apply_to_runs(here: Path) -> None:
    asked: list[PermissionRequest] = []

    def ask(request: PermissionRequest) -> str:
        asked.append(request)
        return PermissionAnswer.ALLOW_SESSION

    grants = Grants(["Bash(echo granted)"])
    prompt = "\n".join([agent_call(call("bash", command="echo granted"), call("bash", command="echo asked")),
                        agent_call(call("bash", command="echo asked"), description="again"),
                        agent_call(call("bash", command="echo background"), description="bg", run_in_background=True),
                        call("agent_output", agent_id="{{agent_id}}")])
    with AgentSession.start(here, entrypoint="print", ask_permission=ask, grants=grants) as agent:
        agent.turns.run_turn(prompt)
    first, again, launched, background = tool_results(agent.files.transcript)
    assert "bash: granted" in first and "bash: asked" in first and "bash: asked" in again
    # the answer became a session grant; a background run asks the same asker, naming itself
    assert [request.input["command"] for request in asked] == ["echo asked", "echo background"]
    assert "Bash(echo asked)" in grants.rules and "Bash(echo background)" in grants.rules
    bg_id = re.fullmatch(launched_pattern(r"bg-\d+-[0-9a-f]{8}"), launched)
    assert bg_id and asked[1].origin == f"sub-agent general {bg_id.group(1)}" and asked[0].origin.startswith("sub-agent general fg-")
    assert asked[1].cancel is not None and "bash: background" in background


def test_a_stopped_runs_question_is_withdrawn(here: Path) -> None:
    """A background run's question waits on the run's own cancel: stopping the run (the
    session's close) answers no, and the run ends `killed`."""
    asking = threading.Event()

    def ask(request: PermissionRequest) -> str:
        asking.set()
        assert request.cancel is not None
        request.cancel.wait()  # the user never answers
        return PermissionAnswer.DENY

    agent = AgentSession.start(here, entrypoint="print", ask_permission=ask)
    with agent:
        agent.turns.run_turn(agent_call(call("bash", command="touch never.txt"), description="bg",
                                        run_in_background=True))
        assert asking.wait(30)
    [meta] = run_metas(agent.files).values()
    assert meta["status"] == "killed" and not (here / "never.txt").exists()


@pytest.mark.parametrize(("call_line", "expected"), [
    (call("agent", description="x", subagent_type="nope", prompt="hi"),
     "Unknown subagent_type: nope (available: general, explore, plan, typo)"),
    (call("agent", description="x", subagent_type="typo", prompt="hi"),
     'Sub-agent "typo" (*/typo.md) names unknown tool frobnicate'),
    (call("agent", description="x", prompt=""), "Error: agent needs a non-empty string `prompt`"),
    (call("agent", description="x", prompt="hi", model="nosuchprovider/m"),
     "Error: the sub-agent's model: unknown provider 'nosuchprovider'"),
])
def test_a_bad_agent_call_is_a_tool_error_the_model_sees(here: Path, call_line: str, expected: str) -> None:
    _agent_file(here, "typo", "tools: read_file, frobnicate\n")
    with AgentSession.start(here, entrypoint="print") as agent:
        agent.turns.run_turn(call_line)
    [text] = tool_results(agent.files.transcript)
    pattern = re.escape(expected).replace(r"\*", ".*")
    assert re.match(pattern, text), text
    assert list_subagent_runs(agent.files).runs == []  # nothing started, nothing written
    _whole(agent)


def test_a_run_never_gets_the_spawn_tools_nor_tools_its_agent_lacks(here: Path) -> None:
    prompt = agent_call(call("agent", description="nested", prompt="hi"), call("agent_output"),
                        call("write_file", file_path="e.txt", content="x"), subagent_type="explore")
    with AgentSession.start(here, entrypoint="print", permission_mode="bypassPermissions") as agent:
        agent.turns.run_turn(prompt)
    [text] = tool_results(agent.files.transcript)
    assert text.count("a sub-agent cannot start or manage sub-agents") == 2
    assert "write_file: Error: write_file is not available to this agent (its tools: read_file)" in text
    assert not (here / "e.txt").exists()
    [run] = list_subagent_runs(agent.files).runs
    assert run.status == "completed" and len(list_subagent_runs(agent.files).runs) == 1


def test_a_run_past_its_max_turns_is_an_error_result(here: Path) -> None:
    _agent_file(here, "short", "tools: read_file\nmaxTurns: 2\n")
    (here / "a.txt").write_text("a\n")
    steps = [call("read_file", file_path="a.txt")] * 3
    with AgentSession.start(here, entrypoint="print") as agent:
        result = agent.turns.run_turn(agent_call(*steps, subagent_type="short") + "\nafter")
    assert result.error is None  # the parent's turn goes on and commits
    [text] = tool_results(agent.files.transcript)
    assert text.startswith("[sub-agent stopped early: hit its turn limit before finishing — output may be incomplete]")
    [meta] = run_metas(agent.files).values()
    assert meta["status"] == "max_turns"
    _whole(agent)


def test_a_provider_error_in_a_run_is_an_error_result_and_both_transcripts_stay_whole(
        here: Path, home: Path) -> None:
    import socket

    from helpers.openai_stub import write_providers

    # A port nothing listens on, held (bound, not listening) for the whole run: the run's first
    # request is refused. A port let go at once could be taken by another test's server meanwhile.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        write_providers(home, f"http://127.0.0.1:{port}/v1", api_key=False)
        _agent_file(here, "remote", "tools: read_file\nmodel: local/stub-model\n")
        with AgentSession.start(here, entrypoint="print") as agent:
            result = agent.turns.run_turn(agent_call("hello", subagent_type="remote"))
    assert result.error is None
    [text] = tool_results(agent.files.transcript)
    assert text.startswith("[sub-agent stopped early: the run errored]\n\nError: ") and "<usage>" in text, text
    [meta] = run_metas(agent.files).values()
    assert meta["status"] == "failed" and meta["error"]
    _whole(agent)


def test_a_crash_of_the_runs_thread_is_an_error_result(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import commandcode.agent.subagents.runner as runner

    def crash(*args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(runner, "execute", crash)
    with AgentSession.start(here, entrypoint="print") as agent:
        result = agent.turns.run_turn(agent_call("hello") + "\n" + call("read_file", file_path="missing.txt"))
    assert result.error is None
    first, second = tool_results(agent.files.transcript)
    assert first.startswith("[sub-agent stopped early: the run errored]\n\nError: the sub-agent crashed: boom")
    assert second.startswith("Error")  # the turn went on after it
    _whole(agent)


def test_esc_stops_the_wait_not_the_run_and_a_later_turn_collects_it(here: Path) -> None:
    release = here / "release"
    prompt = agent_call(call("bash", command=f"while [ ! -e {release} ]; do sleep 0.05; done; echo released"),
                        description="Waits")
    cancel = threading.Event()
    with AgentSession.start(here, entrypoint="print", permission_mode="bypassPermissions") as agent:
        turn = threading.Thread(target=lambda: agent.turns.run_turn(prompt, cancel=cancel))
        turn.start()
        while not _started(agent) and turn.is_alive():
            threading.Event().wait(0.02)
        cancel.set()
        turn.join(30)
        assert not turn.is_alive()
        [text] = tool_results(agent.files.transcript)
        match = re.match(r"Interrupted by user: stopped waiting\. The sub-agent goes on in the background "
                         r"\(agent_id: (fg-1-[0-9a-f]{8})\)", text)
        assert match, text
        assert read_run_meta(str(run_files(agent.files, match.group(1)).meta))["status"] == "running"
        release.touch()
        agent.turns.run_turn(call("agent_output", agent_id=match.group(1)))
    waited = tool_results(agent.files.transcript)[-1]
    assert "status: completed" in waited and "bash: released" in waited
    assert run_metas(agent.files)[match.group(1)]["status"] == "completed"
    _whole(agent)


def test_closing_the_session_stops_running_runs_and_says_so(here: Path) -> None:
    notices: list[str] = []
    prompt = agent_call(call("bash", command="sleep 60"), description="Forever", run_in_background=True)
    with AgentSession.start(here, entrypoint="print", permission_mode="bypassPermissions",
                            notify=notices.append) as agent:
        agent.turns.run_turn(prompt)
        [meta] = _started(agent)
        run_id = meta.name.removeprefix("agent-").removesuffix(".meta.json")
    assert [notice for notice in notices if "sub-agent" in notice] == [f"stopped 1 running sub-agent ({run_id})"]
    assert run_metas(agent.files)[run_id]["status"] == "killed"
    _whole(agent)


def test_a_runs_permission_mode_is_its_agents(here: Path) -> None:
    _agent_file(here, "planner", "tools: write_file, read_file\npermissionMode: plan\n")
    _agent_file(here, "quiet", "tools: bash\npermissionMode: dont-ask\n")
    asked: list[PermissionRequest] = []

    def ask(request: PermissionRequest) -> str:
        asked.append(request)
        return PermissionAnswer.ALLOW_ONCE

    prompt = "\n".join([agent_call(call("write_file", file_path="p.txt", content="x"), subagent_type="planner"),
                        agent_call(call("bash", command="echo hi"), subagent_type="quiet")])
    with AgentSession.start(here, entrypoint="print", ask_permission=ask) as agent:
        agent.turns.run_turn(prompt)
    planned, quiet = tool_results(agent.files.transcript)
    assert not (here / "p.txt").exists() and "write_file: Error" in planned
    assert "permission needed" in quiet and asked == []  # dont-ask: refused, nobody asked


def test_an_unsaved_session_runs_sub_agents_and_writes_no_run_files(here: Path, home: Path) -> None:
    prompt = "\n".join([agent_call(call("write_file", file_path="u.txt", content="u\n")),
                        agent_call("answer", run_in_background=True),
                        call("agent_output", agent_id="{{agent_id}}")])
    with AgentSession.start(here, entrypoint="print", persist=False) as agent:
        agent.turns.run_turn(prompt)
        ran, _, waited = [str(block["content"][0]["text"]) for message in agent.handle.messages
                          for block in message["content"] if block.get("type") == "tool_result"]
    assert "File created successfully" in ran and "status: completed" in waited
    assert (here / "u.txt").read_text() == "u\n"
    assert not list(home.rglob("*subagents*")) and not list(home.rglob("*.jsonl"))


def test_a_run_whose_files_cannot_be_made_is_an_error_and_the_turn_commits(here: Path) -> None:
    with AgentSession.start(here, entrypoint="print") as agent:
        agent.turns.run_turn("hello")  # the session is on disk
        folder = Path(agent.files.folder, agent.session_id)
        folder.mkdir()
        (folder / "subagents").symlink_to(folder / "subagents")  # a loop: listing and making it fail
        result = agent.turns.run_turn(agent_call(call("write_file", file_path="x.txt", content="x")) + "\nafter")
    assert result.error is None
    [text] = tool_results(agent.files.transcript)
    assert text.startswith("Error: the sub-agent could not start: ") and "symbolic links" in text, text
    assert not (here / "x.txt").exists()
    _whole(agent)


def test_esc_during_parallel_runs_names_every_run_that_goes_on(here: Path) -> None:
    release = here / "release"
    waits = call("bash", command=f"touch {here}/started-$$; while [ ! -e {release} ]; do sleep 0.05; done")
    prompt = "\n".join([agent_call(waits, description="One"), agent_call(waits, description="Two", also=True)])
    cancel = threading.Event()
    with AgentSession.start(here, entrypoint="print", permission_mode="bypassPermissions") as agent:
        turn = threading.Thread(target=lambda: agent.turns.run_turn(prompt, cancel=cancel))
        turn.start()
        while len(list(here.glob("started-*"))) < 2 and turn.is_alive():
            threading.Event().wait(0.02)
        cancel.set()
        turn.join(30)
        first, second = tool_results(agent.files.transcript)
        ids = re.findall(r"fg-\d-[0-9a-f]{8}", first)
        assert first.startswith("Interrupted by user: stopped waiting. The sub-agents go on") and len(ids) == 2, first
        assert second == "Skipped — the run was interrupted."
        release.touch()
        agent.turns.run_turn("\n".join(call("agent_output", agent_id=agent_id) for agent_id in ids))
    assert all("status: completed" in text for text in tool_results(agent.files.transcript)[2:])
    _whole(agent)


def test_a_foreground_runs_tool_calls_are_progress_of_the_parents_call(here: Path) -> None:
    from commandcode.agent.events import TurnEvent

    events: list[TurnEvent] = []
    prompt = "\n".join([agent_call(call("write_file", file_path="p.txt", content="p"), call("read_file", file_path="p.txt"),
                                   description="Shows"),
                        agent_call(call("read_file", file_path="p.txt"), description="Quiet", run_in_background=True),
                        call("agent_output", agent_id="{{agent_id}}")])
    with AgentSession.start(here, entrypoint="print") as agent:
        agent.turns.run_turn(prompt, on_event=events.append)
    [first_call] = [event.tool_use_id for event in events if event.kind == "tool_start" and event.name == "agent"][:1]
    progress = [(event.tool_use_id, event.text) for event in events if event.kind == "progress"]
    assert progress == [(first_call, "general: write_file p.txt"), (first_call, "general: read_file p.txt")]


def test_runs_take_the_turns_settings_instead_of_reading_them_again(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The turn reads the settings once (`ProjectContext`); its sub-agent runs build their
    permission rules from those (on ea0e990 each run read every settings file again)."""
    import commandcode.config.settings as settings_module

    reads: list[str] = []
    real = settings_module.load_settings

    def counted(*args: object, **kwargs: object) -> object:
        reads.append("read")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings_module, "load_settings", counted)
    with AgentSession.start(here, entrypoint="print") as agent:
        agent.turns.run_turn(call("read_file", file_path="a.txt"))
        plain = len(reads)  # what a turn reads without runs
        result = agent.turns.run_turn(agent_call(call("read_file", file_path="a.txt"), description="A",
                                                 subagent_type="explore")
                                      + "\n" + agent_call(call("read_file", file_path="a.txt"), also=True,
                                                          description="B", subagent_type="explore"))
    assert result.error is None and len(list_subagent_runs(agent.files).runs) == 2
    assert plain > 0 and len(reads) - plain == plain, reads
