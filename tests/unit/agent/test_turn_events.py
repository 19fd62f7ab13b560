"""A turn's events (`agent/events.py`) and its interruption: `run_turn(prompt, on_event=, cancel=)`."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from commandcode.agent.events import TurnEvent
from commandcode.agent.runtime import AgentSession
from commandcode.agent.tools import run_tool
from commandcode.errors import TurnInterrupted
from helpers.cli import entries, only_transcript


def test_events_follow_the_turn_in_order(home: Path, workdir: Path) -> None:
    seen: list[TurnEvent] = []
    with AgentSession.start(workdir) as agent:
        agent.run_turn('call write_file {"file_path": "x.txt", "content": "1"}', on_event=seen.append)
    kinds = [event.kind for event in seen]
    assert kinds == ["usage", "tool_start", "tool_end", "text", "usage"]
    start, end, text = seen[1], seen[2], seen[3]
    assert start.tool == "write_file" and start.input == {"file_path": "x.txt", "content": "1"}
    assert end.tool == "write_file" and end.text.startswith("File created successfully") and not end.is_error
    assert text.text.startswith("Ran 1 tool call(s)")
    with pytest.raises(ValueError):
        TurnEvent("nonsense")


def test_a_cancelled_turn_commits_nothing_and_kills_the_bash_process_group(home: Path, workdir: Path) -> None:
    with AgentSession.start(workdir) as agent:
        agent.run_turn("first")
        transcript = only_transcript(home, workdir)
        before = transcript.read_bytes()
        cancel = threading.Event()
        pid_file = workdir / "pid"
        started: list[TurnEvent] = []

        def on_event(event: TurnEvent) -> None:
            started.append(event)

        def interrupt() -> None:
            deadline = time.monotonic() + 60
            while not pid_file.exists() or not pid_file.read_text().strip():
                assert time.monotonic() < deadline
                time.sleep(0.02)
            cancel.set()

        threading.Thread(target=interrupt).start()
        # the child `sleep` runs in the background of the shell: a kill of /bin/sh alone would leave it
        prompt = f'call bash {{"command": "sleep 300 & echo $! > {pid_file}; wait"}}'
        with pytest.raises(TurnInterrupted):
            agent.run_turn(prompt, on_event=on_event, cancel=cancel)
        assert transcript.read_bytes() == before
        assert [message["role"] for message in agent.messages] == ["user", "assistant"]
        sleeper = int(pid_file.read_text())
        deadline = time.monotonic() + 30
        while _alive(sleeper):
            assert time.monotonic() < deadline, "the background sleep survived the interrupt"
            time.sleep(0.02)
        assert any(event.kind == "tool_end" and "interrupted by the user" in event.text for event in started)
        agent.run_turn("after the interrupt")  # the session goes on
    assert [entry["message"]["role"] for entry in entries(transcript) if entry["type"] == "message"] == \
        ["user", "assistant", "user", "assistant"]


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return status != "Z"


def test_a_cancel_set_before_the_turn_writes_nothing_for_a_new_session(home: Path, workdir: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    with AgentSession.start(workdir) as agent, pytest.raises(TurnInterrupted):
        agent.run_turn("never", cancel=cancel)
    assert not (home / "projects").exists() or not any((home / "projects").rglob("*"))


def test_bash_timeout_kills_the_group_and_says_so(workdir: Path) -> None:
    result = run_tool("bash", {"command": "sleep 30 & wait", "timeout": 200}, workdir)
    assert result.is_error and result.text == "Error: command timed out after 0.2s"


def test_bash_output_and_exit_code(workdir: Path) -> None:
    result = run_tool("bash", {"command": "echo out; echo err >&2; exit 3"}, workdir)
    assert result.is_error and result.text == "out\nerr\nExit code 3"
    assert os.path.isdir(workdir)
