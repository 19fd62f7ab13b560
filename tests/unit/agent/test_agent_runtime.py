"""`AgentSession`, the service every front end drives sessions through: create, resume (by
reference and `-c`), rename, run a turn with the checkpoint hook, and rewind with the summarizer
and the folder it is given — real files, in-process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from commandcode.agent.locate import session_folder
from commandcode.agent.runtime import AgentSession
from commandcode.checkpoints.modes import RewindMode
from commandcode.errors import SessionLockedError, SessionNotFoundError, UsageError
from commandcode.sessions.meta import read_meta
from commandcode.sessions.reader import open_session


@pytest.fixture
def project(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def _write(path: str, content: str) -> str:
    return f'call write_file {{"file_path": "{path}", "content": "{content}"}}'


def _lines(agent: AgentSession) -> list[dict[str, Any]]:
    return [json.loads(line) for line in agent.files.transcript.read_text().splitlines()]


def test_a_new_session_runs_a_turn_with_checkpoints_and_meta(project: Path) -> None:
    notices: list[str] = []
    with AgentSession.start(project, entrypoint="print", notify=notices.append) as agent:
        agent.rename("  first\nsession ")
        result = agent.turns.run_turn(_write("a.txt", "one"))
    assert result.error is None and result.tool_calls == 1 and notices == []
    assert (project / "a.txt").read_text() == "one"
    meta = read_meta(agent.files.meta)
    assert meta["entrypoint"] == "print" and meta["title"] == "first session" and meta["userRenamed"] is True
    assert [record.prompt for record in agent.rewinds.checkpoint_records()] == [_write("a.txt", "one")]
    assert open_session(agent.files.transcript).name == "first session"


def test_resume_by_reference_and_continue_last(project: Path) -> None:
    with AgentSession.start(project, entrypoint="print") as first:
        first.turns.run_turn("hello")
    with AgentSession.start(project, reference=first.session_id[:8]) as resumed:
        assert [message["role"] for message in resumed.handle.messages] == ["user", "assistant"]
        resumed.turns.run_turn("again")
    with AgentSession.start(project, continue_last=True) as continued:
        assert continued.session_id == first.session_id and len(continued.handle.messages) == 4
    with pytest.raises(UsageError):
        AgentSession.start(project, reference="x", continue_last=True)
    with pytest.raises(SessionNotFoundError):
        AgentSession.start(project, reference="no-such-session")


def test_continue_last_without_a_session_is_refused(project: Path) -> None:
    with pytest.raises(SessionNotFoundError, match="no session to continue"):
        AgentSession.start(project, continue_last=True)


def test_the_writer_lock_is_held_while_open(project: Path) -> None:
    with AgentSession.start(project) as agent:
        agent.turns.run_turn("hello")
        with pytest.raises(SessionLockedError), AgentSession.start(project, reference=agent.session_id):
            pass


def test_a_rewind_summary_comes_from_the_summarizer_it_is_given(project: Path) -> None:
    seen: list[int] = []

    def summarizer(messages: list[dict[str, Any]]) -> str:
        seen.append(len(messages))
        return "written by the test's summarizer"

    with AgentSession.start(project) as agent:
        agent.turns.run_turn(_write("a.txt", "one"))
        agent.turns.run_turn(_write("a.txt", "two"))
    rewinder = AgentSession.for_reference(agent.session_id, project, summarizer=summarizer)
    result = rewinder.rewinds.rewind(1, RewindMode.SUMMARIZE_FROM)
    assert seen and result.summary_entry_id is not None
    summary = next(line for line in _lines(agent) if line.get("type") == "branch_summary")
    assert summary["summary"] == "written by the test's summarizer"
    assert (project / "a.txt").read_text() == "two"  # summarizing keeps the files


def test_an_open_session_rewinds_through_its_own_writer(project: Path) -> None:
    with AgentSession.start(project) as agent:
        agent.turns.run_turn(_write("a.txt", "one"))
        agent.turns.run_turn(_write("a.txt", "two"))
        result = agent.rewinds.rewind(2, RewindMode.BOTH)  # no second writer: that would be refused
        assert result.written == [project / "a.txt"] and (project / "a.txt").read_text() == "one"
        agent.turns.run_turn(_write("b.txt", "three"))
    assert [record.turn_number for record in agent.rewinds.checkpoint_records() if not record.hidden] == [1, 3]


def test_the_rewind_folder_is_the_header_cwd_only_for_its_own_project(project: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with AgentSession.start(project) as agent:
        agent.turns.run_turn("hello")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert session_folder(agent.files) == project
    assert AgentSession.for_reference(str(agent.files.transcript)).folder == project
    forged = agent.files.transcript.read_text().replace(json.dumps(str(project)), json.dumps("/"), 1)
    agent.files.transcript.write_text(forged)
    assert session_folder(agent.files) == elsewhere  # a header claiming `/` opens nothing


def test_a_checkpoints_file_names_a_session_without_transcript(project: Path) -> None:
    with AgentSession.start(project, persist=False) as agent:
        agent.turns.run_turn("nothing is written")
    assert not agent.files.transcript.exists() and not agent.files.checkpoints.exists()
    with AgentSession.start(project) as kept:
        kept.turns.run_turn(_write("a.txt", "one"))
    os.unlink(kept.files.transcript)
    found = AgentSession.for_reference(str(kept.files.checkpoints))
    assert found.session_id == kept.session_id
    assert [choice.modes for choice in found.rewinds.checkpoint_choices()] == [[RewindMode.CODE]]
