"""`meta.permissionMode` is written by the session itself (`agent/mode_meta.py`): with the first
commit of a new session (its launch mode), at once when the mode is set on a saved session,
removed when the mode follows the settings again, and only on a change; `-c` then restores it (never plan
or bypass, never from the picker). A meta that is not a JSON object is left as it is."""

from __future__ import annotations

import json
from pathlib import Path

from commandcode.agent.resume import plan_resume
from commandcode.agent.runtime import AgentSession
from helpers.cli import read_meta_file


def _meta(agent: AgentSession) -> dict[str, object]:
    return read_meta_file(agent.files.transcript)


def test_the_launch_mode_is_written_with_the_first_commit_and_restored_by_c(home: Path, workdir: Path) -> None:
    with AgentSession.start(workdir, permission_mode="acceptEdits") as agent:
        assert not agent.files.meta.exists()
        agent.turns.run_turn("hello")
        assert _meta(agent)["permissionMode"] == "acceptEdits"
    plan = plan_resume(workdir, continue_last=True)
    assert plan.permission_mode == "acceptEdits"
    assert plan_resume(workdir, files=plan.files, source="picker").permission_mode is None


def test_setting_the_mode_writes_it_at_once_and_plan_is_never_restored(home: Path, workdir: Path) -> None:
    with AgentSession.start(workdir) as agent:
        agent.turns.run_turn("hello")
        assert "permissionMode" not in _meta(agent)  # a new session following the settings: nothing to say
        agent.models.set_permission_mode("plan")
        assert _meta(agent)["permissionMode"] == "plan"
        assert plan_resume(workdir, continue_last=True).permission_mode is None
        agent.models.set_permission_mode("acceptEdits")
        assert plan_resume(workdir, continue_last=True).permission_mode == "acceptEdits"
        agent.models.set_permission_mode(None)
        assert "permissionMode" not in _meta(agent)
        assert plan_resume(workdir, continue_last=True).permission_mode is None
        session_id = agent.session_id
    with AgentSession.start(workdir, reference=session_id, permission_mode="acceptEdits") as resumed:
        resumed.turns.run_turn("again")  # a resumed session records the mode it runs in
        assert _meta(resumed)["permissionMode"] == "acceptEdits"


def test_only_a_change_is_written(home: Path, workdir: Path) -> None:
    with AgentSession.start(workdir, permission_mode="acceptEdits") as agent:
        agent.turns.run_turn("hello")
        meta = agent.files.meta
        meta.write_text(json.dumps({**_meta(agent), "permissionMode": "edited by hand"}))
        agent.models.set_permission_mode("acceptEdits")  # unchanged since it was recorded
        assert _meta(agent)["permissionMode"] == "edited by hand"


def test_a_meta_that_is_not_an_object_is_left_alone(home: Path, workdir: Path) -> None:
    notices: list[str] = []
    with AgentSession.start(workdir, notify=notices.append) as agent:
        agent.turns.run_turn("hello")
        agent.files.meta.write_text("[1, 2]")
        agent.models.set_permission_mode("acceptEdits")
        assert agent.models.permission_mode == "acceptEdits"
        assert agent.files.meta.read_text() == "[1, 2]"
        assert any("permission mode is not recorded" in notice for notice in notices)
