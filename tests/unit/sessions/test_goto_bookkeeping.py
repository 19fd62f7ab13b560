"""A jump that leaves only bookkeeping behind (labels, leaf moves, names, model changes) has no
work to summarize: no summary is offered or written, whatever `branchSummary` says, and the leaf
still moves. Once a real message is among what is left, the summary is back."""

from __future__ import annotations

from pathlib import Path

from commandcode.agent.runtime import AgentSession
from commandcode.sessions.reader import open_session
from commandcode.sessions.writer import SessionWriter
from helpers.trees import branched_session, user


def test_labels_alone_left_behind_get_no_summary(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    agent = AgentSession(files, workdir, is_new=False)
    agent.navigation.label(ids["a5"], "done")  # the label entries now follow a5: the leaf is a label
    agent.navigation.label(ids["a5"], None)
    with SessionWriter(files, str(workdir)) as writer:
        writer.append_entry("session_info", {"name": "bookkeeping"})
        writer.append_entry("model_change", {"model": "m"})
        writer.commit(force=True)
    behind, draft = agent.navigation.summary_draft(ids["a5"])
    assert len(behind.entry_ids) == 4 and not behind.has_work and draft is None
    result = agent.navigation.goto(ids["a5"], summary=True)
    assert result.summary_entry_id is None and result.left_entries == 4
    session = open_session(files.transcript)
    assert not [entry for entry in session.entries() if entry["type"] == "branch_summary"]
    assert session.context().entry_ids[-1] == ids["a5"]


def test_a_message_among_the_bookkeeping_brings_the_summary_back(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    agent = AgentSession(files, workdir, is_new=False)
    agent.navigation.label(ids["a5"], "done")
    with SessionWriter(files, str(workdir)) as writer:
        writer.append_message(user("one more prompt"))
        writer.commit(force=True)
    behind, draft = agent.navigation.summary_draft(ids["a5"])
    assert behind.has_work and draft is not None
    result = agent.navigation.goto(ids["a5"], summary=True)
    assert result.summary_entry_id is not None and result.left_entries == 2
