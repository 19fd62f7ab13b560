"""A rewind while sub-agent runs are still going (issue #28): the session's running runs are
stopped before anything is restored, with one notice line, and the rewind then puts back every
file the turn's runs touched; a run that does not stop refuses the rewind with one line and
nothing is rewound. In-process `AgentSession`s with the offline model, real threads, real
`bash` processes, real files."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.agent.subagents import runner as runner_module
from commandcode.agent.subagents.runner import SubagentRunner
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.rewind import RewindOptions
from commandcode.errors import CheckpointError
from helpers.checkpoints import snapshot, write
from helpers.subagent_prompts import agent_call, call, run_metas


@pytest.fixture
def project(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    write(folder / "kept.txt", "before the turn\n")
    return folder


def _turn_leaving_a_run_going(agent: AgentSession, project: Path) -> str:
    """A turn whose background run wrote files and is still running when the turn ends; its id."""
    started = project.parent / "started"  # outside the project: not one of the turn's changes
    prompt = agent_call(call("edit_file", file_path="kept.txt", old_string="before", new_string="during"),
                        call("write_file", file_path="new/made.txt", content="by the run\n"),
                        call("bash", command=f"touch {started}; sleep 60"),
                        description="Long", run_in_background=True)
    agent.turns.run_turn(prompt)
    while not started.exists():
        threading.Event().wait(0.02)
    started.unlink()
    [running] = agent.turns.running_subagents()
    return running


def test_a_rewind_stops_a_running_background_run_first_and_restores_its_files(project: Path) -> None:
    notices: list[str] = []
    before = snapshot(project)
    with AgentSession.start(project, entrypoint="print", permission_mode="bypassPermissions",
                            notify=notices.append) as agent:
        run_id = _turn_leaving_a_run_going(agent, project)
        agent.rewinds.rewind(1, RewindMode.CODE)
        assert agent.turns.running_subagents() == []
    assert f"stopped 1 running sub-agent ({run_id}) before rewinding" in notices
    assert run_metas(agent.files)[run_id]["status"] == "killed"
    assert snapshot(project) == before


def test_a_run_that_does_not_stop_refuses_the_rewind_and_nothing_is_rewound(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_module, "STOP_JOIN_SECONDS", 0.2)
    ignore = SubagentRunner.kill
    monkeypatch.setattr(SubagentRunner, "kill", lambda self, run: None)  # the run ignores the stop
    with AgentSession.start(project, entrypoint="print", permission_mode="bypassPermissions") as agent:
        run_id = _turn_leaving_a_run_going(agent, project)
        during = snapshot(project)
        records = agent.files.checkpoints.read_bytes()
        with pytest.raises(CheckpointError) as refused:
            agent.rewinds.rewind(1, RewindMode.CODE, RewindOptions(force=True))
        assert str(refused.value) == f"sub-agent {run_id} is still running and did not stop; nothing was rewound"
        assert refused.value.hint and "agent_output" in refused.value.hint
        assert snapshot(project) == during and agent.files.checkpoints.read_bytes() == records
        with pytest.raises(CheckpointError, match=f"^sub-agent {run_id} is still running"):
            agent.rewinds.redo()
        monkeypatch.setattr(SubagentRunner, "kill", ignore)  # now it stops: the session's close ends it
    assert run_metas(agent.files)[run_id]["status"] == "killed"


def test_a_dry_run_preview_stops_nothing(project: Path) -> None:
    with AgentSession.start(project, entrypoint="print", permission_mode="bypassPermissions") as agent:
        run_id = _turn_leaving_a_run_going(agent, project)
        agent.rewinds.rewind(1, RewindMode.CODE, RewindOptions(dry_run=True, force=True))
        assert agent.turns.running_subagents() == [run_id]
