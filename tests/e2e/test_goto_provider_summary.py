"""`commandcode sessions goto REF ENTRY` on a session that talks to a provider: the branch
summary is the provider's (the session's recorded model, as a resume would take it), through
real processes and the stub OpenAI-compatible server; `--no-summary` asks nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from commandcode.sessions.reader import open_session
from helpers.cli import only_transcript, run_ok
from helpers.openai_stub import text


def test_cli_goto_asks_the_sessions_provider_for_the_summary(home: Path, workdir: Path, openai_stub: Any) -> None:
    run_ok(["-p", "first prompt", "--model", "local/stub-model"], workdir, home)
    run_ok(["-c", "-p", "second prompt"], workdir, home)  # resumed: the recorded model again
    transcript = only_transcript(home, workdir)
    session = open_session(transcript)
    first_answer = session.path_ids()[1]
    asked = len(openai_stub.requests)
    openai_stub.reply(text("what the second prompt was about"))
    completed = run_ok(["sessions", "goto", transcript.stem, first_answer], workdir, home)
    assert "summarized 2 entries left behind" in completed.stdout
    assert len(openai_stub.requests) == asked + 1
    assert "second prompt" in str(openai_stub.requests[-1].body["messages"])
    session = open_session(transcript)
    summary = session.read_entries([session.leaf_id])[0]
    assert summary["type"] == "branch_summary" and summary["summary"] == "what the second prompt was about"
    assert summary["parentId"] == first_answer
    second_answer = [entry["id"] for entry in session.entries() if entry["type"] == "message"][-1]
    run_ok(["sessions", "goto", transcript.stem, second_answer, "--no-summary"], workdir, home)
    assert len(openai_stub.requests) == asked + 1  # --no-summary asks the model nothing
