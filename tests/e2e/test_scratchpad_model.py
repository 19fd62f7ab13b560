"""The scratchpad as the model sees it, through the real CLI: its path in the system prompt (the
OpenAI-compatible provider's system message; the offline model writes it for
`$COMMANDCODE_SCRATCHPAD`), file reads and writes there without a permission prompt (deny and
ask rules still win), and its manifest put back into the context after a compaction."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from commandcode.workspace.scratchpad import sanitize_cwd
from helpers.cli import SCRATCHPAD_BASE, run_cli, run_ok
from helpers.openai_stub import OpenAIStub, text


def _pad(cwd: Path, session_id: str) -> Path:
    return Path(SCRATCHPAD_BASE) / f"commandcode-{os.getuid()}" / sanitize_cwd(str(cwd)) / session_id / "scratchpad"


def _json(completed: Any) -> dict[str, Any]:
    assert completed.returncode == 0, completed.stderr
    parsed: dict[str, Any] = json.loads(completed.stdout)
    return parsed


def _settings(cwd: Path, value: dict[str, Any]) -> None:
    (cwd / ".commandcode").mkdir(exist_ok=True)
    (cwd / ".commandcode" / "settings.json").write_text(json.dumps(value))


def test_the_provider_is_told_the_scratchpad_path(home: Path, workdir: Path, openai_stub: OpenAIStub) -> None:
    result = _json(run_cli(["-p", "hello", "--model", "local/stub-model", "--output-format", "json"], workdir, home))
    pad = _pad(workdir, result["session_id"])
    system = openai_stub.requests[0].body["messages"][0]
    assert system["role"] == "system"
    assert f"Scratchpad: {pad}\n" in system["content"] and "$COMMANDCODE_SCRATCHPAD" in system["content"]
    assert f"working in {workdir}." in system["content"]  # the session's folder, not the process's
    assert pad.is_dir()


def test_no_scratchpad_no_line(home: Path, workdir: Path, openai_stub: OpenAIStub) -> None:
    _settings(workdir, {"disableScratchpad": True})
    run_ok(["-p", "hello", "--model", "local/stub-model"], workdir, home)
    assert "Scratchpad:" not in openai_stub.requests[0].body["messages"][0]["content"]


def test_writes_and_reads_in_the_scratchpad_need_no_permission(home: Path, workdir: Path) -> None:
    write = 'call write_file {"file_path": "$COMMANDCODE_SCRATCHPAD/notes.md", "content": "working notes\\n"}'
    read = 'call read_file {"file_path": "${COMMANDCODE_SCRATCHPAD}/notes.md"}'
    result = _json(run_cli(["-p", f"{write}\n{read}", "--output-format", "json"], workdir, home))  # headless, no --yolo
    pad = _pad(workdir, result["session_id"])
    assert (pad / "notes.md").read_text() == "working notes\n"
    assert "permission needed" not in result["result"] and "read_file: Read 1/1 file, 1 line" in result["result"]
    # Outside the scratchpad and the working directory, the same write is refused headless.
    outside = workdir.parent / "elsewhere.md"
    refused = _json(run_cli(["-p", f'call write_file {{"file_path": "{outside}", "content": "x"}}',
                             "--output-format", "json"], workdir, home))
    assert "permission needed" in refused["result"] and not outside.exists()


def test_a_link_out_of_the_scratchpad_gets_no_free_pass(home: Path, workdir: Path) -> None:
    first = _json(run_cli(["-p", "hello", "--output-format", "json"], workdir, home))
    pad = _pad(workdir, first["session_id"])
    secret = workdir.parent / "secret.txt"
    secret.write_text("secret\n")
    (pad / "link.txt").symlink_to(secret)
    again = _json(run_cli(["-p", 'call read_file {"file_path": "$COMMANDCODE_SCRATCHPAD/link.txt"}',
                           "-r", first["session_id"], "--output-format", "json"], workdir, home))
    assert "read_file: Error: permission needed" in again["result"]


def test_deny_and_ask_rules_still_win(home: Path, workdir: Path, tmp_path: Path) -> None:
    base = Path(SCRATCHPAD_BASE)
    _settings(workdir, {"permissions": {"deny": [f"Edit(/{base}/**)"], "ask": [f"Read(/{base}/**)"]}})
    write = 'call write_file {"file_path": "$COMMANDCODE_SCRATCHPAD/denied.md", "content": "x"}'
    result = _json(run_cli(["-p", write, "--output-format", "json", "--yolo"], workdir, home))
    assert "refused by the deny rule" in result["result"]
    assert not (_pad(workdir, result["session_id"]) / "denied.md").exists()
    read = 'call read_file {"file_path": "$COMMANDCODE_SCRATCHPAD/any.md"}'
    asked = _json(run_cli(["-p", read, "--output-format", "json", "-r", result["session_id"]], workdir, home))
    assert "permission needed" in asked["result"]


def test_after_a_compaction_the_manifest_is_back_in_the_context(home: Path, workdir: Path,
                                                                 openai_stub: OpenAIStub) -> None:
    write = 'call write_file {"file_path": "$COMMANDCODE_SCRATCHPAD/plan.md", "content": "step one\\n"}'
    first = _json(run_cli(["-p", write, "--output-format", "json"], workdir, home))
    session = first["session_id"]
    for number in range(4):  # long prompts: about 1,000 tokens each
        run_ok(["-p", f"turn {number} " + "words " * 700, "-r", session], workdir, home)
    _settings(workdir, {"contextWindow": 5000})
    openai_stub.reply(text("**Goal**\nthe summary"))  # the compaction's summary
    openai_stub.reply(text("done"))
    run_ok(["-p", "what is in the scratchpad?", "-r", session, "--model", "local/stub-model"], workdir, home)
    assert len(openai_stub.requests) == 2  # the summary, then the turn
    sent = openai_stub.requests[-1].body["messages"]
    texts = [message.get("content") for message in sent if message["role"] == "user"]
    assert "the summary" in str(texts[0])
    manifest = next(text for text in texts if isinstance(text, str) and text.startswith("Files in the session scratchpad"))
    assert str(_pad(workdir, session)) in manifest and "- plan.md (9 bytes, modified " in manifest
    transcript = next(home.rglob(f"{session}.jsonl")).read_text()
    assert '"type":"compaction"' in transcript.replace(" ", "")
    assert "Files in the session scratchpad" not in transcript  # context only, no disk format
    # the next process resumes the compacted context: the manifest is put back for it too
    openai_stub.reply(text("still here"))
    run_ok(["-p", "and now?", "-r", session, "--model", "local/stub-model"], workdir, home)
    resumed = [message.get("content") for message in openai_stub.requests[-1].body["messages"] if message["role"] == "user"]
    assert "the summary" in str(resumed[0])
    assert sum(1 for text in resumed if isinstance(text, str) and text.startswith("Files in the session scratchpad")) == 1
