"""`sessions/navigate.py` and `agent/branching.py`'s jumps: entry references, the branch a jump
leaves behind (stopping at the common ancestor, with the files read and modified), and labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.errors import CommandcodeError, InvalidSessionError
from commandcode.sessions.navigate import ancestors, find_entry, left_behind
from commandcode.sessions.reader import open_session
from helpers.trees import branched_session


def test_entries_are_found_by_id_or_unique_prefix(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    session = open_session(files.transcript)
    assert find_entry(session, ids["u2"]) == ids["u2"]
    assert find_entry(session, f" {ids['u2'][:6]} ") == ids["u2"]
    with pytest.raises(InvalidSessionError, match="no entry"):
        find_entry(session, "nothere")
    with pytest.raises(InvalidSessionError, match="no entry"):
        find_entry(session, ids["u2"][:3])  # under four characters is no prefix


def test_left_behind_stops_at_the_common_ancestor(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    session = open_session(files.transcript)
    behind = left_behind(session, ids["a3"])
    assert behind.common_ancestor == ids["a1"]
    assert behind.entry_ids == [ids[key] for key in ("u3", "a4", "r4", "a5")]
    assert behind.modified_files == [str(workdir / "b.txt")] and behind.read_files == []
    assert left_behind(session, ids["a5"]).entry_ids == []  # the leaf itself leaves nothing
    assert left_behind(session, ids["u1"]).entry_ids[0] == ids["a1"]  # an ancestor leaves what follows it
    assert ancestors(session, ids["a3"]) == [ids[key] for key in ("u1", "a1", "u2", "a2", "r2", "a3")]


def test_jumping_back_and_forth_reports_what_it_read(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    agent = AgentSession(files, workdir, is_new=False)
    first = agent.navigation.goto(ids["a3"], summary=True)
    assert first.summary_entry_id is not None and first.left_entries == 4
    second = agent.navigation.goto(ids["a5"], summary=True)  # back: leaves branch A and the first summary
    summary = open_session(files.transcript).read_entries([second.leaf_id])[0]
    assert summary["details"]["readFiles"] == [str(workdir / "notes.txt")]
    assert summary["fromId"] == first.leaf_id
    with pytest.raises(CommandcodeError, match="already at"):
        agent.navigation.goto(second.leaf_id)


def test_an_open_session_sees_its_new_context_after_a_jump(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    with AgentSession(files, workdir, is_new=False) as agent:
        assert agent.handle.messages[-1]["content"][0]["text"] == "B done"
        agent.navigation.goto(ids["a3"], summary=False)
        assert agent.handle.messages[-1]["content"][0]["text"] == "A done"
        target, changed = agent.navigation.label(ids["u1"], "start")
        assert (target, changed) == (ids["u1"], True)
        assert agent.navigation.label(ids["u1"], "start") == (ids["u1"], False)
        agent.turns.run_turn("continue on A")
    context = open_session(files.transcript).context().entry_ids
    assert ids["a3"] in context and ids["a5"] not in context
