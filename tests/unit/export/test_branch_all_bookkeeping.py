"""`--branch all` shows the branches that hold messages, and leaves out those that hold only
bookkeeping (labels, leaf moves): they used to appear as empty "Branch from … (0 entries)"
groups in md and html."""

from __future__ import annotations

from pathlib import Path

from commandcode.agent.runtime import AgentSession
from commandcode.export.select import BranchClose, BranchOpen, Selection
from commandcode.sessions.reader import open_session
from helpers.trees import branched_session


def test_bookkeeping_only_branches_are_left_out_and_real_ones_kept(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    agent = AgentSession(files, workdir, is_new=False)
    agent.navigation.label(ids["a5"], "done")  # a label entry under a5 ...
    agent.navigation.goto(ids["a5"], summary=False)  # ... left behind by a jump: a branch of bookkeeping only
    plan = Selection(open_session(files.transcript), "all").plan
    opens = [step for step in plan if isinstance(step, BranchOpen)]
    assert [step.entry_id for step in opens] == [ids["u2"]]  # branch A, and nothing for the label
    assert opens[0].entries == 4
    assert sum(isinstance(step, BranchClose) for step in plan) == 1
    for fmt in ("md", "html"):
        out = workdir / f"tree.{fmt}"
        agent.export(fmt=fmt, path=str(out), selection="all")
        text = out.read_text()
        assert "0 entries" not in text and "second prompt on branch A" in text
        assert text.count("not on the active path") == 1
