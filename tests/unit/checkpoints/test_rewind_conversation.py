"""Conversation rewinds and summaries, end to end through the CLI: real turns run by the offline
model (`commandcode -p`), then `commandcode rewind`. Checks what both tools resume at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from commandcode.checkpoints.records import read_checkpoints
from commandcode.cli import app
from commandcode.config.paths import project_dir
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.reader import open_session
from helpers.checkpoints import snapshot, write

runner = CliRunner()


def cli(*arguments: str, expect: int = 0) -> str:
    result = runner.invoke(app, list(arguments))
    assert result.exit_code == expect, (result.output, result.exception)
    return result.output


@pytest.fixture
def session(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> SessionFiles:
    """Three real turns: a reply, a file created by write_file, a file changed by edit_file."""
    monkeypatch.chdir(project)
    write(project / "existing.txt", "base\n")
    cli("-p", "Say hello please")
    cli("-c", "-p", 'call write_file {"file_path": "newfile.txt", "content": "version one\\n"}')
    cli("-c", "-p", 'call edit_file {"file_path": "existing.txt", "old_string": "base", "new_string": "changed"}')
    [transcript] = [path for path in project_dir(project).glob("*.jsonl") if ".checkpoints." not in path.name]
    return SessionFiles.for_transcript(transcript)


def last_line(files: SessionFiles) -> dict:
    return json.loads(files.transcript.read_text().strip().split("\n")[-1])


def texts(messages: list[dict]) -> list[str]:
    return [block.get("text", "") for message in messages for block in message["content"] if block.get("type") == "text"]


def test_checkpoints_list_json_shows_numbers_prompts_files_and_choices(session: SessionFiles, project: Path) -> None:
    listing = json.loads(cli("checkpoints", "list", session.session_id, "--json"))
    rows = listing["checkpoints"]
    assert [row["number"] for row in rows] == [1, 2, 3]
    assert rows[0]["prompt"] == "Say hello please" and rows[0]["files"] == []
    assert rows[1]["files"][0]["path"] == str(project / "newfile.txt") and rows[1]["files"][0]["hash"] is None
    assert rows[2]["files"][0]["algo"] == "sha256"  # checkpoints.compatibleBackups is on by default
    assert rows[0]["modes"] == ["both", "conversation", "code", "summarize-from"]
    assert "summarize-to" in rows[2]["modes"]
    table = cli("checkpoints", "list", session.session_id)
    assert "Say hello please" in table and "newfile.txt" in table


def test_rewind_both_restores_files_and_moves_the_leaf_for_both_tools(session: SessionFiles, project: Path) -> None:
    records = read_checkpoints(session.checkpoints)
    before_turn_two = open_session(session.transcript).message_id_map()[records[1].last_message_id]
    result = json.loads(cli("rewind", session.session_id, "--to", "2", "--mode", "both", "--yes", "--json"))
    assert result["deleted"] == [str(project / "newfile.txt")] and result["written"] == [str(project / "existing.txt")]
    assert snapshot(project) == {"existing.txt": ("file", b"base\n", 0o644)}
    marker = last_line(session)  # the real CLI's leaf on open is the last valid line
    assert (marker["type"], marker["customType"], marker["parentId"]) == ("custom", "commandcode.leaf", before_turn_two)
    assert marker["data"] == {"reason": "rewind", "checkpointId": records[1].id,
                              "redoPointId": read_checkpoints(session.checkpoints)[-1].id}
    reopened = open_session(session.transcript)
    assert texts(reopened.context().messages) == ["Say hello please", "Offline model reply. You said: Say hello please"]
    assert [record.turn_number for record in read_checkpoints(session.checkpoints) if not record.hidden] == [1]
    cli("-c", "-p", "and now?")
    resumed = open_session(session.transcript).context().messages
    assert texts(resumed)[-2:] == ["and now?", "Offline model reply. You said: and now?"]
    assert "version one" not in json.dumps(resumed)
    # checkpoint 2 stays (rewound past, hidden from the real CLI), so the new turn is numbered 4
    assert [record.turn_number for record in read_checkpoints(session.checkpoints) if not record.hidden] == [1, 4]


def test_rewind_to_the_first_prompt_makes_the_leaf_a_root(session: SessionFiles, project: Path) -> None:
    cli("rewind", session.session_id, "--to", "1", "--mode", "conversation", "--yes")
    assert last_line(session)["parentId"] is None
    assert open_session(session.transcript).context().messages == []
    assert (project / "newfile.txt").exists(), "conversation only: files untouched"
    assert [record for record in read_checkpoints(session.checkpoints) if not record.hidden] == []


def test_summarize_from_replaces_later_turns_with_a_branch_summary(session: SessionFiles, project: Path) -> None:
    before_files = snapshot(project)
    old_leaf = open_session(session.transcript).leaf_id
    lines_before = session.transcript.read_text().count("\n")
    result = json.loads(cli("rewind", session.session_id, "--to", "2", "--mode", "summarize-from", "--yes", "--json"))
    entry = last_line(session)
    assert entry["type"] == "branch_summary" and entry["id"] == result["summaryEntryId"]
    assert entry["fromId"] == old_leaf and entry["parentId"] == result["leafEntryId"]
    assert entry["summary"].strip()
    context = open_session(session.transcript).context().messages
    assert len(context) == 3 and context[-1]["meta"]["source"] == "branch-summary"
    assert session.transcript.read_text().count("\n") == lines_before + 1, "original messages stay"
    assert snapshot(project) == before_files
    assert len([record for record in read_checkpoints(session.checkpoints) if not record.is_redo_point]) == 3


def test_summarize_to_compacts_everything_before_the_checkpoint(session: SessionFiles, project: Path) -> None:
    reopened = open_session(session.transcript)
    records = read_checkpoints(session.checkpoints)
    target = reopened.message_id_map()[records[2].last_message_id]
    ids = reopened.context().entry_ids
    first_of_turn_three = ids[ids.index(target) + 1]
    cli("rewind", session.session_id, "--to", "3", "--mode", "summarize-to", "--yes")
    entry = last_line(session)
    assert entry["type"] == "compaction" and entry["firstKeptEntryId"] == first_of_turn_three
    assert entry["tokensBefore"] > 0
    context = open_session(session.transcript).context().messages
    assert context[0]["meta"]["isSummary"] is True
    assert texts(context)[1].startswith("call edit_file")


def test_a_refused_code_restore_leaves_the_conversation_alone(session: SessionFiles, project: Path) -> None:
    (project / "existing.txt").write_text("edited by hand\n")
    transcript = session.transcript.read_bytes()
    output = cli("rewind", session.session_id, "--to", "2", "--mode", "both", "--yes", expect=1)
    assert "existing.txt" in output and "--force" in output
    assert session.transcript.read_bytes() == transcript
    assert (project / "newfile.txt").exists()
    cli("rewind", session.session_id, "--to", "2", "--mode", "both", "--yes", "--force")
    assert (project / "existing.txt").read_text() == "base\n"


def test_cli_usage_errors(session: SessionFiles) -> None:
    # Usage errors exit 2 (README), refused operations 1 (no checkpoint 7 is a refusal).
    assert "--mode is required" in cli("rewind", session.session_id, "--to", "2", expect=2)
    assert "confirmation" in cli("rewind", session.session_id, "--to", "2", "--mode", "code", expect=2)
    assert "no checkpoint 7" in cli("rewind", session.session_id, "--to", "7", "--mode", "code", "--yes", expect=1)
    dry = cli("rewind", session.session_id, "--to", "2", "--mode", "code", "--dry-run")
    assert "delete     newfile.txt" in dry


def test_sessions_without_a_transcript_can_rewind_code(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.checkpoints.manager import CheckpointManager

    monkeypatch.chdir(project)
    files = SessionFiles(project_dir(project), "0f0f0f0f-0000-4000-8000-000000000000")
    manager = CheckpointManager.for_session(files, project)
    manager.open_checkpoint("no session", 0, None)
    manager.backup_before_edit(str(project / "made.txt"))
    write(project / "made.txt", "x")
    manager.record_after_edit(str(project / "made.txt"))
    listing = json.loads(cli("checkpoints", "list", str(files.checkpoints), "--json"))
    assert listing["checkpoints"][0]["modes"] == ["code"]
    cli("rewind", str(files.checkpoints), "--to", "1", "--mode", "code", "--yes")
    assert not (project / "made.txt").exists()


def test_on_a_terminal_the_six_choices_are_a_numbered_prompt(session: SessionFiles, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.cli import rewind as rewind_cmds

    monkeypatch.setattr(rewind_cmds, "_is_terminal", lambda: True)
    result = runner.invoke(app, ["rewind", session.session_id, "--to", "2"], input="6\n")
    assert result.exit_code == 0, result.output
    for label in ("1. Restore code and conversation", "2. Restore conversation only", "3. Restore code only",
                  "4. Summarize from here", "5. Summarize up to here", "6. Cancel"):
        assert label in result.output
    assert "Cancelled" in result.output and (project / "newfile.txt").exists()
    result = runner.invoke(app, ["rewind", session.session_id, "--to", "2"], input="3\ny\n")
    assert result.exit_code == 0, result.output
    assert "delete     newfile.txt" in result.output and not (project / "newfile.txt").exists()
    assert last_line(session)["type"] == "message", "code only: the conversation did not move"


def test_a_session_open_for_writing_is_rewound_only_by_its_holder(session: SessionFiles, project: Path) -> None:
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.rewind import RewindOptions, rewind
    from commandcode.errors import SessionLockedError
    from commandcode.sessions.writer import SessionWriter

    before, transcript = snapshot(project), session.transcript.read_bytes()
    with SessionWriter(session, str(project)) as writer:
        for mode in (RewindMode.BOTH, RewindMode.CODE):
            with pytest.raises(SessionLockedError):
                rewind(session, project, 2, mode)
        assert snapshot(project) == before and session.transcript.read_bytes() == transcript
        result = rewind(session, project, 2, RewindMode.BOTH, RewindOptions(writer=writer))
    assert result.rewound_past == 2 and not (project / "newfile.txt").exists()
    assert last_line(session)["customType"] == "commandcode.leaf"
