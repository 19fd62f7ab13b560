"""Redo and the rewind timeline, in-process through `AgentSession` with the offline model: real
transcripts, checkpoints files and project files. A redo puts back exactly the state before the
last rewind (bytes, modes, deletions, leaf); rewinds and redos walk the history both ways; the
real CLI's reader sees only the checkpoints on the conversation's path."""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.records import read_checkpoints
from commandcode.checkpoints.rewind import RewindOptions
from commandcode.errors import ChangedOutsideError, CheckpointError
from commandcode.sessions.reader import open_session
from helpers.checkpoints import snapshot


@pytest.fixture
def project(project_here: Path) -> Path:
    return project_here


def _write(path: str, content: str) -> str:
    return "call write_file " + json.dumps({"file_path": path, "content": content})


def _session(project: Path, *prompts: str) -> tuple[str, list[object]]:
    """Runs one turn per prompt; returns the session id and the tree before each turn and after the last."""
    trees: list[object] = []
    with AgentSession.start(project) as agent:
        for prompt in prompts:
            trees.append(snapshot(project))
            agent.turns.run_turn(prompt)
        trees.append(snapshot(project))
        return agent.session_id, trees


def _context(agent: AgentSession) -> list[object]:
    return list(open_session(agent.files.transcript).context().messages)


def test_redo_puts_back_bytes_modes_deletions_and_the_leaf(project: Path) -> None:
    (project / "tool.sh").write_text("#!/bin/sh\n")
    os.chmod(project / "tool.sh", 0o755)
    session, trees = _session(project, _write("a.txt", "one"),
                              _write("a.txt", "two") + "\n" + _write("tool.sh", "#!/bin/sh\necho hi\n"),
                              _write("sub/dir/new.txt", "three"))
    agent = AgentSession.for_reference(session)
    context = _context(agent)
    leaf = open_session(agent.files.transcript).leaf_id
    agent.rewinds.rewind(2, RewindMode.BOTH)
    assert snapshot(project) == trees[1] and not (project / "sub").exists()
    assert agent.rewinds.can_redo()
    result = agent.rewinds.redo()
    assert result.redo and result.number == 2
    assert snapshot(project) == trees[3]
    assert os.stat(project / "tool.sh").st_mode & 0o777 == 0o755
    assert _context(agent) == context
    marker = json.loads(agent.files.transcript.read_text().splitlines()[-1])  # the real CLI's leaf: the last line
    assert (marker["customType"], marker["parentId"], marker["data"]["reason"]) == ("commandcode.leaf", leaf, "redo")
    assert [choice.number for choice in agent.rewinds.checkpoint_choices()] == [1, 2, 3]
    assert not agent.rewinds.can_redo()
    with pytest.raises(CheckpointError, match="nothing to redo"):
        agent.rewinds.redo()


def test_rewinds_and_redos_walk_the_history_both_ways(project: Path) -> None:
    session, trees = _session(project, _write("a.txt", "1"), _write("b.txt", "2"), _write("a.txt", "3"))
    agent = AgentSession.for_reference(session)
    for number in (3, 2, 1):
        agent.rewinds.rewind(number, RewindMode.CODE)
        assert snapshot(project) == trees[number - 1]
    for number in (2, 3, 4):  # each redo undoes one rewind, newest first
        agent.rewinds.redo()
        assert snapshot(project) == trees[number - 1]
    agent.rewinds.rewind(1, RewindMode.CODE)
    agent.rewinds.rewind(3, RewindMode.CODE)  # forward, to a state no rewind had left
    assert snapshot(project) == trees[2]


def test_a_new_turn_after_a_rewind_is_a_branch_both_can_be_reached(project: Path) -> None:
    session, trees = _session(project, _write("a.txt", "one"), _write("a.txt", "two"))
    with AgentSession.for_reference(session) as agent:
        agent.rewinds.rewind(2, RewindMode.BOTH)
        agent.turns.run_turn(_write("b.txt", "branch"))
    branch = snapshot(project)
    agent = AgentSession.for_reference(session)
    numbers = [(choice.number, choice.record.rewound) for choice in agent.rewinds.checkpoint_choices(include_rewound=True)]
    assert numbers == [(1, False), (2, True), (3, False)]
    agent.rewinds.rewind(2, RewindMode.BOTH)  # the old branch: turn 2's starting point, b.txt (made on the new one) gone
    assert snapshot(project) == trees[1]
    assert [choice.number for choice in agent.rewinds.checkpoint_choices()] == [1]
    agent.rewinds.redo()
    assert snapshot(project) == branch
    assert [choice.number for choice in agent.rewinds.checkpoint_choices()] == [1, 3]


def test_the_real_cli_reads_only_the_checkpoints_on_the_path(project: Path) -> None:
    session, _ = _session(project, _write("a.txt", "one"), _write("a.txt", "two"), _write("a.txt", "three"))
    agent = AgentSession.for_reference(session)
    agent.rewinds.rewind(2, RewindMode.BOTH)
    lines = agent.files.checkpoints.read_bytes().split(b"\n")
    parsed = []
    for line in lines:  # the real CLI: JSON.parse each line, skip the ones that fail
        try:
            parsed.append(json.loads(line))
        except ValueError:
            assert line.startswith(b"#")
    assert [record["turnNumber"] for record in parsed] == [1]
    hidden = [record for record in read_checkpoints(agent.files.checkpoints) if record.hidden]
    assert [(record.turn_number, record.rewound, record.is_redo_point) for record in hidden] == [
        (2, True, False), (3, True, False), (0, False, True)]


def test_redo_refuses_a_file_changed_since_the_rewind_unless_forced(project: Path) -> None:
    session, trees = _session(project, _write("a.txt", "one"), _write("a.txt", "two"))
    agent = AgentSession.for_reference(session)
    agent.rewinds.rewind(2, RewindMode.CODE)
    (project / "a.txt").write_text("edited in an editor")
    with pytest.raises(ChangedOutsideError, match="a.txt"):
        agent.rewinds.redo()
    assert gc.isenabled(), "a refused redo turns the cycle collector back on"
    assert (project / "a.txt").read_text() == "edited in an editor"
    preview = agent.rewinds.redo(RewindOptions(dry_run=True, diff=True))
    [row] = preview.files
    assert row["action"] == "restored" and row["outside_edit"]["mtime"]
    assert "-edited in an editor" in row["diff"] and "+two" in row["diff"]
    agent.rewinds.redo(RewindOptions(force=True))
    assert snapshot(project) == trees[2]
    assert gc.isenabled()


def test_a_summary_is_undone_by_redo(project: Path) -> None:
    session, _ = _session(project, "first", "second", "third")
    agent = AgentSession.for_reference(session)
    context = _context(agent)
    agent.rewinds.rewind(2, RewindMode.SUMMARIZE_FROM)
    assert _context(agent) != context
    agent.rewinds.redo()
    assert _context(agent) == context


def test_a_sweep_keeps_every_object_a_redo_point_names(project: Path) -> None:
    from commandcode.checkpoints.references import sweep_objects
    from commandcode.checkpoints.store import BackupStore

    session, trees = _session(project, _write("a.txt", "one"), _write("a.txt", "only in the redo point"))
    agent = AgentSession.for_reference(session)
    agent.rewinds.rewind(1, RewindMode.CODE)
    [point] = [record for record in read_checkpoints(agent.files.checkpoints) if record.is_redo_point]
    kept = {item.hash for item in point.files}
    swept = sweep_objects(BackupStore(), grace_seconds=0)
    assert swept, "the sweep ran"
    assert all(BackupStore().contains(digest) for digest in kept if digest)
    agent.rewinds.redo()
    assert snapshot(project) == trees[2]
