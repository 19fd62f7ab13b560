"""Shell tracking's missing parts (issue 14): the baseline thread ends with the session, its
sidecar is written whole and ignored when damaged, folders a command made are removed by a
rewind, and rewinds and redos of shell changes can be repeated. In-process `AgentSession`s, the
offline model's real `bash` calls, real files and a real store."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.shell_baseline import SUFFIX
from commandcode.checkpoints.store import content_id
from commandcode.config.paths import project_dir
from helpers.checkpoints import snapshot, write


@pytest.fixture
def project(project_here: Path) -> Path:
    return project_here


def _bash(command: str) -> str:
    return "call bash " + json.dumps({"command": command})


def _worker_thread(agent: AgentSession) -> threading.Thread:
    manager = agent.turns.checkpoints()
    assert manager is not None and manager.shell is not None
    thread = manager.shell.worker.thread
    assert thread is not None and thread.is_alive()
    return thread


def _sidecar(project: Path, session_id: str) -> Path:
    return project_dir(project) / f"{session_id}{SUFFIX}"


def test_close_joins_the_baseline_thread_and_keeps_the_baseline(project: Path) -> None:
    for index in range(1500):  # enough that the baseline is still running when the turn ends
        write(project / f"pkg{index % 30}/file{index}.txt", f"file {index}\n" * 40)
    agent = AgentSession.start(project, permission_mode="bypassPermissions")
    with agent:
        assert agent.turns.run_turn("just answer, no tools").error is None
        thread = _worker_thread(agent)
    assert not thread.is_alive(), "the baseline thread outlived AgentSession.close()"
    sidecar = _sidecar(project, agent.session_id)
    if sidecar.exists():  # cancelled at close: what it had stored is kept, whole
        assert json.loads(sidecar.read_text())["version"] == 1
    with AgentSession.start(project, reference=agent.session_id, permission_mode="bypassPermissions") as again:
        assert again.turns.run_turn(_bash("echo new > pkg0/new.txt")).error is None  # the baseline is finished first
        thread = _worker_thread(again)
    assert not thread.is_alive()
    again.close()  # a second close is harmless
    document = json.loads(sidecar.read_text())
    assert document["version"] == 1 and document["cwd"] == str(project)
    assert len(document["files"]) == 1501
    for name in ("pkg3/file3.txt", "pkg0/new.txt"):
        assert document["files"][name][4] == content_id((project / name).read_bytes())


def test_a_damaged_sidecar_is_ignored_and_the_command_is_still_undone(project: Path) -> None:
    write(project / "keep.txt", "precious\n")
    with AgentSession.start(project, permission_mode="bypassPermissions") as agent:
        agent.turns.run_turn(_bash("true"))  # a bash call finishes the baseline first
    sidecar = _sidecar(project, agent.session_id)
    assert "keep.txt" in json.loads(sidecar.read_text())["files"]
    for damaged in (b'{"version":1,"cwd":', b'{"version":99}', b"[1,2]",
                    json.dumps({"version": 1, "cwd": str(project), "files": {"keep.txt": ["x"]}}).encode()):
        sidecar.write_bytes(damaged)
        with AgentSession.start(project, reference=agent.session_id, permission_mode="bypassPermissions") as again:
            result = again.turns.run_turn(_bash("echo gone > keep.txt"))
            assert result.error is None
        AgentSession.for_reference(agent.session_id).rewinds.rewind(1, RewindMode.CODE)
        assert (project / "keep.txt").read_text() == "precious\n", damaged
        assert json.loads(sidecar.read_text())["version"] == 1, "the next write replaces the damaged file whole"


def test_folders_a_command_made_are_removed_and_rewinds_and_redos_repeat(project: Path) -> None:
    write(project / "keep.txt", "v1\n")
    write(project / "old/empty/.placeholder", "")
    (project / "old/empty/.placeholder").unlink()  # a folder that existed, empty, before the command
    before = snapshot(project)
    with AgentSession.start(project, permission_mode="bypassPermissions") as agent:
        agent.turns.run_turn(_bash("mkdir -p made/deep/er old/empty/inner && echo x > made/deep/er/f.txt && "
                             "echo y > made/g.txt && echo z > old/empty/inner/h.txt && echo v2 > keep.txt"))
    after = snapshot(project)
    rewinder = AgentSession.for_reference(agent.session_id)
    for _ in range(3):  # rewind → redo → rewind → redo ...: every step lands exactly
        rewinder.rewinds.rewind(1, RewindMode.BOTH)
        assert snapshot(project) == before
        assert not (project / "made").exists() and not (project / "old/empty/inner").exists()
        assert (project / "old/empty").is_dir(), "a folder that was there before stays"
        rewinder.rewinds.redo()
        assert snapshot(project) == after
        assert (project / "made/deep/er/f.txt").read_text() == "x\n"
