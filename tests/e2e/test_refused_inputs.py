"""What a user walking the commands meets on bad input: paths that are no transcript, transcripts
with lines that cannot be read, a data dir or folder that cannot be written, a file that cannot
be read. Each case is one `error:` line with a hint that names the real problem (or a warning and
a result), no traceback, and nothing lost. File permissions are tested with them applying as for
a user who is not root (`helpers.cli.run_as_user`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from helpers.cli import assert_error_lines, run_cli, run_json, run_ok, snapshot, transcripts
from helpers.session_files import write_claude_session

CLAUDE_ID = "3f2a9c1e-5b7d-4e8a-9c6f-1a2b3c4d5e6f"
PI_ID = "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"


def call(tool: str, **arguments: str) -> str:
    return f"call {tool} " + json.dumps(arguments)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder.resolve()


def assert_clean(completed: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in completed.stderr and "internal error" not in completed.stderr, completed.stderr
    assert "os error" not in completed.stderr and "[Errno" not in completed.stderr, completed.stderr


# --------------------------------------------------------------------------------------------
# Imports of transcripts with lines that cannot be read


def _claude_lines(cwd: Path) -> list[str]:
    base = {"sessionId": CLAUDE_ID, "cwd": str(cwd), "version": "2.1.0", "isSidechain": False, "userType": "external"}
    return [json.dumps({**base, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-02-01T10:00:00.000Z",
                        "message": {"role": "user", "content": "the prompt"}}),
            json.dumps({**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1",
                        "timestamp": "2026-02-01T10:00:01.000Z",
                        "message": {"role": "assistant", "model": "claude-x", "content": [{"type": "text", "text": "the reply"}]}})]


def _pi_lines(cwd: Path) -> list[str]:
    stamp = "2026-01-02T03:04:05.000Z"
    return [json.dumps({"type": "session", "version": 3, "id": PI_ID, "timestamp": stamp, "cwd": str(cwd)}),
            json.dumps({"type": "message", "id": "a0000001", "parentId": None, "timestamp": stamp,
                        "message": {"role": "user", "content": "the prompt", "timestamp": 1}}),
            json.dumps({"type": "message", "id": "a0000002", "parentId": "a0000001", "timestamp": stamp,
                        "message": {"role": "assistant", "content": [{"type": "text", "text": "the reply"}],
                                    "provider": "stub", "model": "stub-model", "usage": {"input": 1, "output": 1},
                                    "stopReason": "stop", "timestamp": 2}})]


@pytest.mark.parametrize("tool", ["claude", "pi"])
@pytest.mark.parametrize("damage", ["a garbage line", "a torn last line"])
def test_an_import_says_which_lines_it_left_out(home: Path, work: Path, tmp_path: Path, tool: str, damage: str) -> None:
    lines = _claude_lines(work) if tool == "claude" else _pi_lines(work)
    if damage == "a garbage line":
        body = "\n".join([*lines[:-1], "GARBAGE {not json", lines[-1]]) + "\n"
        line, reason = len(lines), "invalid_json"
    else:
        body = "\n".join(lines) + "\n" + '{"type": "assist'
        line, reason = len(lines) + 1, "torn"
    source = tmp_path / f"{CLAUDE_ID if tool == 'claude' else PI_ID}.jsonl"
    source.write_text(body)
    completed = run_ok(["import", tool, str(source)], work, home)
    assert_clean(completed)
    assert completed.stderr.splitlines() == [
        f"warning: {source.name}: 1 unreadable line(s) left out of the import (first: line {line}, {reason})"]
    assert source.read_text() == body  # the source keeps them
    (imported,) = transcripts(home)
    assert run_json(["sessions", "context", str(imported), "--json", "--stats"], work, home)["entries"] == 2
    as_json = run_json(["import", tool, str(source), "--json"], work, home)
    assert as_json["already_imported"]


def test_an_import_of_a_whole_transcript_warns_of_nothing(home: Path, work: Path, tmp_path: Path) -> None:
    source = write_claude_session(tmp_path / "claude", work, CLAUDE_ID, "the prompt", "the reply")
    completed = run_ok(["import", "claude", str(source)], work, home)
    assert completed.stderr == ""


# --------------------------------------------------------------------------------------------
# References that can only be paths, and are no transcript


def _paths(inputs: Path) -> dict[str, tuple[Path, str, str]]:
    """name: (path, what the error says, what the hint says)."""
    folder = inputs / "a-folder.jsonl"
    folder.mkdir(parents=True)
    notes = inputs / "notes.txt"
    notes.write_text("not a transcript\n")
    return {"missing": (inputs / "missing.jsonl", "missing.jsonl: no such file", "to see"),
            "folder": (folder, "a-folder.jsonl is a folder, not a", "pass the session's .jsonl file"),
            "not jsonl": (notes, "notes.txt is not a", "pass the session's .jsonl file")}


@pytest.mark.parametrize("case", ["missing", "folder", "not jsonl"])
@pytest.mark.parametrize("argv", [["sessions", "show"], ["export"], ["-p", "hello", "--session"],
                                  ["import", "claude"], ["import", "pi"]])
def test_a_path_that_is_no_transcript_is_told_so(home: Path, work: Path, tmp_path: Path, case: str,
                                                  argv: list[str]) -> None:
    inputs = tmp_path / "inputs"
    path, said, hinted = _paths(inputs)[case]
    before = snapshot(inputs)
    completed = run_cli([*argv, str(path)], work, home)
    assert_clean(completed)
    error = assert_error_lines(completed, error_contains=said)
    assert hinted in completed.stderr.splitlines()[1]
    if argv[0] == "import":
        assert f"{argv[1]} session transcript" in error or case == "missing"
    assert snapshot(inputs) == before  # nothing made there, nothing changed
    assert transcripts(home) == []


def test_a_name_with_a_slash_still_resolves_before_any_path_is_judged(home: Path, work: Path) -> None:
    run_ok(["-p", "hello", "-n", "api/v2 work"], work, home)
    shown = run_ok(["sessions", "show", "api/v2 work"], work, home)
    assert "name: api/v2 work" in shown.stdout
