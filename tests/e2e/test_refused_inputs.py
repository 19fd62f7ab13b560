"""What a user walking the commands meets on bad input: paths that are no transcript, transcripts
with lines that cannot be read, a data dir or folder that cannot be written, a file that cannot
be read. Each case is one `error:` line with a hint that names the real problem (or a warning and
a result), no traceback, and nothing lost. File permissions are tested with them applying as for
a user who is not root (`helpers.cli.run_as_user`)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.cli import assert_error_lines, run_as_user, run_cli, run_json, run_ok, snapshot, transcripts
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


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[list[Path]]:
    """Folders a test makes read-only (`chmod a-w`, files included); writable again after it, so
    the test's folder can be removed."""
    made: list[Path] = []
    yield made
    for root in made:
        for folder, _dirs, files in os.walk(root):
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)


def make_read_only(root: Path, made: list[Path]) -> None:
    made.append(root)
    for folder, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            path = os.path.join(folder, name)
            os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) & ~0o222)
        os.chmod(folder, 0o555)


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


# --------------------------------------------------------------------------------------------
# A data dir, folder or file that cannot be written or read


def test_a_read_only_data_dir_names_itself_and_loses_nothing(home: Path, work: Path, read_only: list[Path]) -> None:
    run_ok(["-p", call("write_file", file_path="a.txt", content="one\n")], work, home)
    (transcript,) = transcripts(home)
    make_read_only(home, read_only)
    before = snapshot(home)
    for argv in (["-c", "-p", "again"], ["sessions", "rename", transcript.stem, "renamed"]):
        completed = run_as_user(argv, work, home)
        assert_clean(completed)
        assert_error_lines(completed, error_contains="Permission denied")
        hint = completed.stderr.splitlines()[1]
        assert f"data dir {home} cannot be written" in hint and "COMMANDCODE_HOME" in hint, hint
    assert snapshot(home) == before
    listed = run_as_user(["sessions", "list", "--all"], work, home)  # reading still works
    assert listed.returncode == 0 and transcript.stem[:8] in listed.stdout, listed


@pytest.mark.parametrize("command", ["fork", "clone"])
def test_a_fork_into_a_read_only_data_dir_names_the_session_it_would_write(home: Path, work: Path, command: str,
                                                                          read_only: list[Path]) -> None:
    run_ok(["-p", "hello"], work, home)
    (transcript,) = transcripts(home)
    make_read_only(home, read_only)
    before = snapshot(home)
    completed = run_as_user(["sessions", command, transcript.stem], work, home)
    assert_clean(completed)
    assert_error_lines(completed, error_contains="Permission denied")
    first, hint = completed.stderr.splitlines()[:2]
    # the new session's transcript, not the temporary file it is written through
    assert first.startswith(f"error: {transcript.parent}/") and first.endswith(".jsonl: Permission denied"), first
    assert ".tmp" not in completed.stderr, completed.stderr
    assert f"data dir {home} cannot be written" in hint, hint
    assert snapshot(home) == before


def test_a_gc_that_cannot_write_its_lock_says_to_make_the_store_writable(home: Path, work: Path,
                                                                         read_only: list[Path]) -> None:
    run_ok(["-p", call("write_file", file_path="a.txt", content="one\n")], work, home)
    objects = home / "objects"
    assert objects.is_dir()
    make_read_only(objects, read_only)
    completed = run_as_user(["doctor", "--gc"], work, home)
    assert_clean(completed)
    assert_error_lines(completed, error_contains="cannot lock the object store")
    assert completed.stderr.splitlines()[1] == f"hint: make {objects} writable, then retry"


@pytest.mark.parametrize("fmt", ["html", "md", "jsonl"])
def test_an_export_to_a_folder_that_cannot_be_written_names_the_target(home: Path, work: Path, tmp_path: Path,
                                                                        fmt: str, read_only: list[Path]) -> None:
    run_ok(["-p", "hello"], work, home)
    (transcript,) = transcripts(home)
    folder = tmp_path / "out"
    folder.mkdir()
    make_read_only(folder, read_only)
    target = folder / f"session.{fmt}"
    completed = run_as_user(["export", transcript.stem, "-o", str(target)], work, home)
    assert_clean(completed)
    assert completed.returncode == 1, completed
    assert completed.stderr.splitlines()[0] == f"error: {target}: Permission denied", completed.stderr
    assert "check the permissions" in completed.stderr.splitlines()[1]
    assert os.listdir(folder) == []


def test_a_transcript_that_cannot_be_read_is_one_plain_warning_and_one_plain_error(home: Path, work: Path,
                                                                                   tmp_path: Path) -> None:
    run_ok(["-p", "first"], work, home)
    run_ok(["-p", "second"], work, home)
    unreadable, readable = sorted(transcripts(home), key=lambda path: path.stat().st_mtime, reverse=True)
    unreadable.chmod(0)
    try:
        listed = run_as_user(["sessions", "list", "--all"], work, home)
        assert_clean(listed)
        assert listed.returncode == 0 and readable.stem[:8] in listed.stdout, listed
        assert f"warning: {unreadable}: Permission denied" in listed.stderr.splitlines(), listed.stderr
        shown = run_as_user(["sessions", "show", unreadable.stem], work, home)
        assert_clean(shown)
        assert_error_lines(shown, error_contains=f"{unreadable}: Permission denied")
    finally:
        unreadable.chmod(0o644)


def test_listing_no_archives_says_so(home: Path, work: Path) -> None:
    completed = run_ok(["sweep", "--list-archives"], work, home)
    assert completed.stdout.strip() == "No archived sessions (`commandcode sweep --archive` makes them)."
    assert run_json(["sweep", "--list-archives", "--json"], work, home) == []


def test_a_sweep_says_a_session_it_keeps_cannot_be_read(home: Path, work: Path) -> None:
    run_ok(["-p", "hello"], work, home)
    (transcript,) = transcripts(home)
    transcript.chmod(0)
    try:
        completed = run_as_user(["sweep", "--dry-run", "--older-than", "0h"], work, home)
        assert_clean(completed)
        assert completed.returncode == 0, completed
        assert f"kept {transcript.stem}: cannot be read (Permission denied)" in completed.stdout.splitlines()
    finally:
        transcript.chmod(0o644)


def test_a_conversation_rewind_says_it_read_past_an_unreadable_line_and_keeps_it(home: Path, work: Path) -> None:
    run_ok(["-p", "hello"], work, home)
    run_ok(["-c", "-p", "again"], work, home)
    (transcript,) = transcripts(home)
    lines = transcript.read_bytes().split(b"\n")
    lines.insert(2, b"{garbage")
    transcript.write_bytes(b"\n".join(lines))
    damaged = transcript.read_bytes()
    completed = run_ok(["rewind", transcript.stem, "--to", "1", "--mode", "conversation", "--yes"], work, home)
    assert_clean(completed)
    assert f"warning: {transcript.name}: 1 unreadable line(s) skipped" in completed.stderr.splitlines(), completed.stderr
    after = transcript.read_bytes()
    assert after.startswith(damaged) and len(after) > len(damaged)  # the bad line stays; the leaf move is appended
