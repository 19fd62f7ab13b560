"""`/resume` (alias `/sessions`) and the questions a resume asks (`shell/resume_flow.py`), with the
shared fake `Shell`: the picker's result is given by the fake's `run_screen`, answers by its
`confirm`/`choose`; sessions are real files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from commandcode.agent.resume import plan_resume
from commandcode.agent.runtime import AgentSession
from commandcode.config.paths import project_dir
from commandcode.errors import CommandcodeError
from commandcode.shell.resume_flow import open_plan
from commandcode.shell.slash import registry
from helpers.cli import hold_writer, stop
from helpers.fake_shell import FakeShell
from helpers.session_files import sid, write_session


class ResumeShell(FakeShell):
    """The shared fake, answering the picker with the row of `pick` (None: left), every
    yes/no question with `confirm` and every choice with `choose`; switches are recorded."""

    def __init__(self, agent: AgentSession, *, pick: str | None, confirm: bool = True,
                 choose: int | None = 0) -> None:
        super().__init__(agent)
        self.pick, self.confirm_answer, self.choose_answer = pick, confirm, choose
        self.switched: list[tuple[AgentSession, bool]] = []
        self.on_screen = self._pick

    def switch_to(self, agent: AgentSession, *, keep_grants: bool = True) -> None:
        self.switched.append((agent, keep_grants))

    def confirm(self, question: str, *, default: bool = False) -> bool:
        self.questions.append(question)
        return self.confirm_answer

    def choose(self, question: str, options: Sequence[str], *, default: int = 0) -> int | None:
        self.questions.append(question)
        return self.choose_answer

    def _pick(self, screen: Any) -> Any:
        if self.pick is None:
            return None
        return next(row.summary for row in screen.data.rows() if row.summary.id == self.pick)


def _current(workdir: Path) -> AgentSession:
    return AgentSession.start(workdir)


def test_resume_and_its_alias_switch_to_the_picked_session(home: Path, workdir: Path) -> None:
    write_session(workdir, sid(1), ["one"], meta={"model": "vendor/x"})
    commands = registry()
    assert commands["resume"] is commands["sessions"]
    shell = ResumeShell(_current(workdir), pick=sid(1))
    commands["resume"].run(shell, "")
    [(agent, keep_grants)] = shell.switched
    assert agent.session_id == sid(1) and keep_grants is False
    assert shell.screens[0].data.current_id == shell.agent.session_id
    left = ResumeShell(_current(workdir), pick=None)
    commands["sessions"].run(left, "one")
    assert left.switched == [] and left.screens[0].data.query == "one"


def test_a_session_whose_directory_is_gone_is_relinked_when_the_user_agrees(home: Path, workdir: Path,
                                                                           tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    write_session(gone, sid(1), ["old"])
    gone.rmdir()
    shell = ResumeShell(_current(workdir), pick=sid(1), confirm=True)
    plan = plan_resume(workdir, reference=sid(1))
    agent = open_plan(shell, plan)
    assert agent is not None and "no longer exists" in shell.questions[0]
    assert (project_dir(workdir) / f"{sid(1)}.jsonl").is_file()

    (tmp_path / "gone2").mkdir()
    write_session(tmp_path / "gone2", sid(2), ["old"])
    (tmp_path / "gone2").rmdir()
    declined = ResumeShell(_current(workdir), pick=None, confirm=False)
    plan = plan_resume(workdir, reference=sid(2))
    assert open_plan(declined, plan) is not None
    assert not (project_dir(workdir) / f"{sid(2)}.jsonl").exists()
    assert any("stays filed under" in notice for notice in declined.notices)


@pytest.mark.parametrize(("answer", "expect"), [(0, "read-only"), (2, "cancel"), (None, "cancel")])
def test_a_session_another_process_writes_offers_read_only(home: Path, workdir: Path, answer: int | None,
                                                           expect: str) -> None:
    transcript = write_session(workdir, sid(1), ["busy"])
    holder = hold_writer(transcript, workdir, home)
    try:
        shell = ResumeShell(_current(workdir), pick=None, choose=answer)
        agent = open_plan(shell, plan_resume(workdir, reference=sid(1)))
        assert f"process {holder.pid} is writing" in shell.questions[0]
        if expect == "read-only":
            assert agent is not None and agent.handle.persist is False
        else:
            assert agent is None
    finally:
        stop(holder)


def test_resume_refuses_a_session_that_cannot_be_opened(home: Path, workdir: Path) -> None:
    folder = project_dir(workdir)
    folder.mkdir(parents=True)
    (folder / f"{sid(1)}.jsonl").write_text('{"type":"session","version":99,"id":"x","timestamp":"t","cwd":"/"}\n')
    shell = ResumeShell(_current(workdir), pick=sid(1))
    with pytest.raises(CommandcodeError) as refused:
        registry()["resume"].run(shell, "")
    assert "cannot be opened" in str(refused.value) and shell.switched == []


@pytest.mark.parametrize("answer", [0, 1, None])
def test_a_big_idle_session_asks_summary_or_full(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                                 answer: int | None) -> None:
    import os

    transcript = write_session(workdir, sid(1), ["x" * 250_000, "y" * 250_000])
    os.utime(transcript, (1, 1))
    compacted: list[bool] = []

    from commandcode.agent.compaction_hooks import SessionCompaction

    def compact(self: SessionCompaction, *args: object, **kwargs: object) -> None:
        compacted.append(self._handle.is_open)  # inside the writer

    monkeypatch.setattr(SessionCompaction, "compact", compact)
    shell = ResumeShell(_current(workdir), pick=None, choose=answer)
    plan = plan_resume(workdir, reference=sid(1))
    assert plan.offer_summary
    agent = open_plan(shell, plan)
    assert "idle over an hour" in shell.questions[0]
    assert (agent is None) == (answer is None)
    assert compacted == ([True] if answer == 0 else [])
