"""The streaming and interruption interface the shell codes against: `run_turn(on_event=, cancel=)`,
`Model.respond(on_text=, cancel=)`, `bash` in its own process group killed on cancel, an
interrupted turn committed whole as far as it got (marked with the real CLI's `Interrupted by
user`), and the prompt history as the caller's choice."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from commandcode.agent.events import TurnEvent
from commandcode.agent.providers.base import ModelReply
from commandcode.agent.runtime import AgentSession
from commandcode.agent.tools import run_tool
from commandcode.errors import TurnInterrupted
from commandcode.sessions.reader import open_session


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0] if Path(f"/proc/{pid}/stat").exists() else "X"
    return status not in ("Z", "X")


def test_events_stream_text_deltas_tools_and_usage(here: Path) -> None:
    events: list[TurnEvent] = []
    with AgentSession.start(here) as agent:
        agent.turns.run_turn('call write_file {"file_path": "a.txt", "content": "x"}', on_event=events.append)
        agent.turns.run_turn("hello there friend", on_event=events.append)
    kinds = [event.kind for event in events]
    assert kinds[:6] == ["usage", "assistant", "tool_start", "tool_end", "tool_result", "text"]
    start, end = events[2], events[3]
    assert (start.name, start.input) == ("write_file", {"file_path": "a.txt", "content": "x"})
    assert end.outcome.startswith("File created successfully at:") and not end.is_error
    last_turn = events[kinds.index("tool_result") + 1:]
    deltas = [event.text for event in last_turn if event.kind == "text"]
    assert len(deltas) > 2 and "".join(deltas).endswith("You said: hello there friend")
    assert sum(1 for event in events if event.kind == "usage") == 3  # two model calls, then one


def test_an_interrupted_model_call_keeps_what_streamed_in_one_commit(here: Path) -> None:
    with AgentSession.start(here) as agent:
        agent.turns.run_turn("first")
        before = agent.files.transcript.read_bytes()
        cancel = threading.Event()

        def stop_on_first_delta(event: TurnEvent) -> None:
            if event.kind == "text":
                cancel.set()

        result = agent.turns.run_turn("second one streams for a while", on_event=stop_on_first_delta, cancel=cancel)
        assert result.interrupted and result.text == "Offl"  # the first token-sized chunk
        after = agent.files.transcript.read_bytes()
        assert after.startswith(before) and after.count(b"\n") - before.count(b"\n") == 3  # prompt, partial, marker
        said = [(m["role"], m["content"][0]["text"]) for m in agent.handle.messages]
        assert said[2:] == [("user", "second one streams for a while"), ("assistant", "Offl"),
                            ("user", "Interrupted by user")]
        agent.turns.run_turn("third")  # the session goes on after it
    assert b"You said: third" in agent.files.transcript.read_bytes()


def test_an_interrupted_new_session_leaves_no_file(here: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    with AgentSession.start(here) as agent, pytest.raises(TurnInterrupted):
        agent.turns.run_turn("never saved", cancel=cancel)
    assert not agent.files.transcript.exists()


def test_cancel_kills_the_whole_process_group_of_bash_at_once(tmp_path: Path) -> None:
    cancel = threading.Event()
    pid_file = tmp_path / "pids"
    command = f"sleep 300 & echo $! > {pid_file}; sleep 300"
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            run_tool("bash", {"command": command}, tmp_path, cancel=cancel)
        except BaseException as error:
            outcome.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    for _ in range(2000):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        threading.Event().wait(0.01)
    child = int(pid_file.read_text())
    assert _alive(child)
    cancel.set()
    worker.join(timeout=60)
    assert not worker.is_alive(), "bash did not stop when cancelled"
    assert len(outcome) == 1 and isinstance(outcome[0], TurnInterrupted)
    for _ in range(500):
        if not _alive(child):
            break
        threading.Event().wait(0.01)
    assert not _alive(child), "the background child of the command survived"


def test_an_interrupted_bash_turn_keeps_the_call_with_its_output_so_far(here: Path) -> None:
    cancel = threading.Event()

    def on_event(event: TurnEvent) -> None:
        if event.kind == "tool_start":
            threading.Timer(0.5, cancel.set).start()

    with AgentSession.start(here, permission_mode="bypassPermissions") as agent:
        agent.turns.run_turn("first")
        result = agent.turns.run_turn('call bash {"command": "echo so-far; sleep 300"}', on_event=on_event, cancel=cancel)
        assert result.interrupted
        *_, call, stopped, marker = agent.handle.messages
        assert call["content"][0]["type"] == "tool_use"
        block = stopped["content"][0]
        assert block["tool_use_id"] == call["content"][0]["id"]
        assert block["content"][0]["text"] == "so-far\nInterrupted by user: the command was stopped before it finished."
        assert marker["content"] == [{"type": "text", "text": "Interrupted by user"}] and marker["meta"].keys() == {"messageId"}
    reopened = open_session(agent.files.transcript).context().messages
    assert reopened[-3:] == agent.handle.messages[-3:]


def test_bash_timeout_output_cap_and_exit_code(tmp_path: Path) -> None:
    timed = run_tool("bash", {"command": "echo started; sleep 300", "timeout": 300}, tmp_path)
    assert timed.is_error and "started" in timed.text and "timed out after 0.3s" in timed.text
    big = run_tool("bash", {"command": "yes abcdefghij | head -c 100000"}, tmp_path)
    assert not big.is_error and "[output cut at 30,000 characters; 70,000 more characters not shown]" in big.text
    failed = run_tool("bash", {"command": "echo out; echo err >&2; exit 3"}, tmp_path)
    assert failed.is_error and failed.text == "out\nerr\nExit code 3"
    here = run_tool("bash", {"command": "pwd"}, tmp_path)
    assert here.text == str(tmp_path)


def test_a_tool_call_the_provider_could_not_decode_is_a_tool_error(here: Path) -> None:
    class BadJson:
        model_id = "test/bad"
        context_window = 1000
        calls = 0

        def respond(self, messages: list[dict[str, Any]], **_: Any) -> ModelReply:
            self.calls += 1
            if self.calls == 1:
                return ModelReply([{"type": "tool_use", "id": "c1", "name": "write_file", "input": {}},
                                   {"type": "tool_use", "id": "c2", "name": "no_such_tool", "input": {}}],
                                  input_errors={"c1": "the arguments are not valid JSON (Expecting value at 1)"})
            results = [m["content"][0]["content"][0]["text"] for m in messages if m["role"] == "user"
                       and m["content"][0].get("type") == "tool_result"]
            return ModelReply([{"type": "text", "text": " | ".join(results)}])

    with AgentSession.start(here, model=BadJson()) as agent:
        result = agent.turns.run_turn("go")
    assert result.text == ("Error: the arguments are not valid JSON (Expecting value at 1) | "
                           "Error: unknown tool 'no_such_tool'")
    assert result.error is None


def test_history_is_written_only_when_the_caller_asks(here: Path, home: Path) -> None:
    with AgentSession.start(here) as agent:
        agent.turns.run_turn("not recorded")
        assert not (home / "history.jsonl").exists()
        agent.turns.run_turn("recorded", record_history=True)
    assert '"p":"recorded"' in (home / "history.jsonl").read_text()
