"""Legacy v1/v2 transcripts are migrated on open as the real CLI does (format §4.7), and nothing
is lost on any failure path: the original is kept byte for byte, the rewrite goes only through a
temp file and a rename, and a migration that fails or races leaves a usable session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from commandcode import _native
from commandcode.config.paths import project_dir
from commandcode.errors import SessionLockedError
from commandcode.sessions import migrate
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.migrate import migrate_legacy
from commandcode.sessions.reader import open_session
from commandcode.storage.ids import iso_from_ms
from helpers.locations import FIXTURES

SID = "0d6c2f3e-5b7a-4c1e-9f0a-2b3c4d5e6f70"
PARENT = "1ccb4627-5286-46c5-84a9-ce35adae899d"


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = (tmp_path / "work").resolve()
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def install(home: Path, cwd: Path, data: bytes | str, meta: Any = None, *, session_id: str = SID) -> Path:
    """Writes a transcript (and optionally its meta) into `cwd`'s project folder."""
    folder = project_dir(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{session_id}.jsonl"
    transcript.write_bytes(data.encode() if isinstance(data, str) else data)
    if meta is not None:
        (folder / f"{session_id}.meta.json").write_text(meta if isinstance(meta, str) else json.dumps(meta, indent=2))
    return transcript


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def records(transcript: Path) -> list[dict[str, Any]]:
    data = transcript.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode().split("\n")[:-1]]


def v2(role: str, content: Any, second: int = 6, **metadata: Any) -> str:
    return json.dumps({"id": f"m{second}", "timestamp": f"2026-01-02T03:04:{second:02d}.000Z", "sessionId": SID,
                       "parentId": None, "role": role, "content": content, "gitBranch": "-",
                       "metadata": {**metadata, "version": 2}}) + "\n"


def ms(iso: str) -> int:
    from commandcode.storage.ids import parse_iso

    parsed = parse_iso(iso)
    assert parsed is not None
    return int(parsed.timestamp() * 1000)


# --------------------------------------------------------------------------------------------
# conversions


def test_v2_conversion(home: Path, cwd: Path) -> None:
    original = fixture("legacy_v2.jsonl")
    meta_before = json.loads(fixture("legacy_v2.meta.json"))
    transcript = install(home, cwd, original, fixture("legacy_v2.meta.json").decode())
    session = open_session(transcript)
    lines = records(transcript)
    head, entries = lines[0], lines[1:]
    assert head == {"type": "session", "version": 3, "id": SID, "timestamp": "2026-01-02T03:04:00.000Z",  # meta.createdAt
                    "cwd": str(cwd), "parentSession": str(transcript.parent / f"{PARENT}.jsonl")}
    assert list(head) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]
    assert [entry["message"]["role"] for entry in entries] == ["user", "assistant", "user", "assistant", "user",
                                                              "assistant"]
    assert [entry["message"]["content"] for entry in entries] == [
        [{"type": "text", "text": "read a.py"}],
        [{"type": "thinking", "thinking": "I should read it", "signature": ""},
         {"type": "text", "text": "Reading."},
         {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"file_path": "/home/alice/proj/a.py"}}],
        # the tool message and the user message after it merge into one user message
        [{"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "print('hi')"}]},
         {"type": "text", "text": "and this image"},
         {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}],
        [{"type": "tool_use", "id": "call_2", "name": "run", "input": {"command": "false"}}],
        # a tool message with no user message after it becomes a user message; error-text is plain text
        [{"type": "tool_result", "tool_use_id": "call_2", "content": [{"type": "text", "text": "exit status 1"}]}],
        [{"type": "text", "text": "All done."}],  # plain-string content
    ]
    # meta.model goes onto the last assistant entry only
    assert [entry.get("model") for entry in entries] == [None, None, None, None, None, "anthropic/claude-legacy"]
    first = entries[0]
    assert first["timestamp"] == "2026-01-02T03:04:06.000Z"
    assert first["message"]["meta"] == {"messageId": "22222222-3333-4444-8555-000000000006",
                                        "createdAt": ms("2026-01-02T03:04:06.000Z"), "source": "user"}
    assert entries[1]["message"]["meta"]["source"] == "model"
    # the entrypoint of the legacy lines is copied into meta; nothing else changes there
    assert json.loads(transcript.with_name(f"{SID}.meta.json").read_text()) == {**meta_before, "entrypoint": "print"}
    assert transcript.with_name(f"{SID}.v2.bak").read_bytes() == original
    assert session.entrypoint == "print" and session.model == "anthropic/claude-legacy"
    assert session.context().entry_ids == [entry["id"] for entry in entries]


def test_v1_conversion(home: Path, cwd: Path) -> None:
    original = fixture("legacy_v1.jsonl")
    transcript = install(home, cwd, original)
    mtime = transcript.stat().st_mtime
    session = open_session(transcript)
    head, *entries = records(transcript)
    # no meta: the header timestamp is the file's birthtime (mtime where the OS has none), no parentSession
    assert head == {"type": "session", "version": 3, "id": SID, "timestamp": iso_from_ms(int(mtime * 1000)),
                    "cwd": str(cwd)}
    assert [entry["message"]["content"] for entry in entries] == [
        [{"type": "text", "text": "hello v1"}],
        [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}],
        [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "a.py"}]}],
        [{"type": "text", "text": "bye"}],
    ]
    assert [entry["timestamp"] for entry in entries] == [f"2026-01-02T03:04:0{second}.000Z" for second in (6, 7, 8, 9)]
    assert not transcript.with_name(f"{SID}.meta.json").exists(), "no entrypoint: no meta file is created"
    assert transcript.with_name(f"{SID}.v2.bak").read_bytes() == original
    assert session.message_count == 4


def test_tool_result_outputs_and_images(home: Path, cwd: Path) -> None:
    data = (v2("assistant", [{"type": "tool-call", "toolCallId": "c1", "toolName": "t", "input": {"a": 1}}], 1)
            + v2("tool", [{"type": "tool-result", "toolCallId": "c1", "toolName": "t",
                           "output": {"type": "json", "value": {"rows": [1, 2]}}}], 2)
            + v2("tool", [{"type": "tool-result", "toolCallId": "c2", "toolName": "t",
                           "output": {"type": "error-text", "value": "boom"}}], 3)
            + v2("user", [{"type": "image", "image": "data:image/jpeg;base64,/9j/4AAQ"},
                          {"type": "text", "text": "line\u2028separator stays"}], 4))
    transcript = install(home, cwd, data)
    open_session(transcript)
    _head, *entries = records(transcript)
    assert [entry["message"]["role"] for entry in entries] == ["assistant", "user"]
    assert entries[1]["message"]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": '{"rows": [1, 2]}'}]},
        {"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": "boom"}]},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}},
        {"type": "text", "text": "line\u2028separator stays"},
    ]


def test_header_timestamp_from_an_iso_created_at(home: Path, cwd: Path) -> None:
    transcript = install(home, cwd, v2("user", "hi"), {"createdAt": "2025-12-31T23:59:59.123Z"})
    open_session(transcript)
    assert records(transcript)[0]["timestamp"] == "2025-12-31T23:59:59.123Z"


def test_existing_meta_entrypoint_is_kept(home: Path, cwd: Path) -> None:
    transcript = install(home, cwd, v2("user", "hi", entrypoint="print"), {"entrypoint": "interactive", "title": "t"})
    open_session(transcript)
    assert json.loads(transcript.with_name(f"{SID}.meta.json").read_text()) == {"entrypoint": "interactive",
                                                                                "title": "t"}


def test_meta_that_is_not_an_object_is_left_alone(home: Path, cwd: Path) -> None:
    """The entrypoint cannot be merged into a broken meta file: the migration still succeeds and
    the meta file keeps its bytes (it used to fail the open after the transcript was rewritten)."""
    transcript = install(home, cwd, v2("user", "hi", entrypoint="print"), '["not", "an", "object"]')
    meta = transcript.with_name(f"{SID}.meta.json")
    before = meta.read_bytes()
    session = open_session(transcript)
    assert session.message_count == 1 and session.format == "v3"
    assert meta.read_bytes() == before


def test_parent_session_is_absolute_when_opened_by_a_relative_path(home: Path, cwd: Path) -> None:
    transcript = install(home, cwd, v2("user", "hi"), {"parentSessionId": PARENT})
    open_session(os.path.relpath(transcript, cwd))
    assert records(transcript)[0]["parentSession"] == str(transcript.parent / f"{PARENT}.jsonl")


def test_leading_bom_does_not_drop_the_first_record(home: Path, cwd: Path) -> None:
    data = b"\xef\xbb\xbf" + (v2("user", "first", 1) + v2("assistant", "second", 2)).encode()
    transcript = install(home, cwd, data)
    session = open_session(transcript)
    assert session.message_count == 2
    assert records(transcript)[1]["message"]["content"] == [{"type": "text", "text": "first"}]
    assert transcript.with_name(f"{SID}.v2.bak").read_bytes() == data


def test_unparseable_lines_survive_only_in_the_backup(home: Path, cwd: Path) -> None:
    original = fixture("legacy_v2.jsonl")
    transcript = install(home, cwd, original)
    open_session(transcript)
    assert b"{torn legacy line" not in transcript.read_bytes()
    assert b"{torn legacy line" in transcript.with_name(f"{SID}.v2.bak").read_bytes()


# --------------------------------------------------------------------------------------------
# the backup and the rewrite


def test_rewrite_goes_through_a_temp_file_and_one_rename(home: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    transcript = install(home, cwd, fixture("legacy_v1.jsonl"))
    renames: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(source: Any, target: Any, *args: Any, **kwargs: Any) -> None:
        renames.append((os.fspath(source), os.fspath(target)))
        real_replace(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", spy)
    open_session(transcript)
    assert renames == [(str(transcript.with_name(f"{transcript.name}.{os.getpid()}.tmp")), str(transcript))]


def test_failed_rename_leaves_the_original_intact(home: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash before the rename: the original is untouched, no temp file is left, the backup is
    complete; the next open migrates normally and reuses the same backup."""
    original = fixture("legacy_v2.jsonl")
    transcript = install(home, cwd, original, fixture("legacy_v2.meta.json").decode())
    meta = transcript.with_name(f"{SID}.meta.json")
    meta_before = meta.read_bytes()
    real_replace = os.replace

    def failing(source: Any, target: Any, *args: Any, **kwargs: Any) -> None:
        if os.fspath(target) == str(transcript):
            raise OSError(28, "No space left on device", str(target))
        real_replace(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match="No space left"):
        open_session(transcript)
    assert transcript.read_bytes() == original
    assert meta.read_bytes() == meta_before, "meta is only updated after the transcript was replaced"
    assert sorted(path.name for path in transcript.parent.iterdir()) == sorted(
        [transcript.name, meta.name, f"{SID}.v2.bak"])
    assert transcript.with_name(f"{SID}.v2.bak").read_bytes() == original

    monkeypatch.setattr(os, "replace", real_replace)
    session = open_session(transcript)
    assert session.message_count == 6
    assert transcript.with_name(f"{SID}.v2.bak").read_bytes() == original
    assert not transcript.with_name(f"{SID}.v2.bak.1").exists()


def test_existing_backup_is_never_overwritten(home: Path, cwd: Path) -> None:
    """An older `.v2.bak` keeps its bytes; the current original is kept beside it, not dropped."""
    original = fixture("legacy_v1.jsonl")
    transcript = install(home, cwd, original)
    older = transcript.with_name(f"{SID}.v2.bak")
    older.write_bytes(b"an older backup\n")
    open_session(transcript)
    assert older.read_bytes() == b"an older backup\n"
    assert transcript.with_name(f"{SID}.v2.bak.1").read_bytes() == original
    assert records(transcript)[0]["type"] == "session"


def test_a_partial_backup_from_a_crash_is_not_trusted(home: Path, cwd: Path) -> None:
    """A `.v2.bak` cut short (a crash while copying) must not count as the backup: the original is
    written in full to `.v2.bak.1` before the transcript is replaced."""
    original = fixture("legacy_v2.jsonl")
    transcript = install(home, cwd, original)
    partial = transcript.with_name(f"{SID}.v2.bak")
    partial.write_bytes(original[:100])
    open_session(transcript)
    assert partial.read_bytes() == original[:100]
    assert transcript.with_name(f"{SID}.v2.bak.1").read_bytes() == original


def test_identical_backup_is_reused(home: Path, cwd: Path) -> None:
    original = fixture("legacy_v1.jsonl")
    transcript = install(home, cwd, original)
    transcript.with_name(f"{SID}.v2.bak").write_bytes(original)
    open_session(transcript)
    assert sorted(path.name for path in transcript.parent.iterdir()) == [f"{SID}.jsonl", f"{SID}.v2.bak"]


def test_a_stale_scan_does_not_migrate_twice(home: Path, cwd: Path) -> None:
    """A process that scanned the file as v2 and then waited for the lock must not "migrate" the
    v3 file the other process wrote (it would become an empty session)."""
    transcript = install(home, cwd, fixture("legacy_v2.jsonl"))
    files = SessionFiles.for_transcript(transcript)
    stale = _native.scan_session(transcript)
    assert stale.format == "v2"
    migrate_legacy(files)  # decides on a fresh scan under the lock, never on `stale`
    migrated = transcript.read_bytes()
    migrate_legacy(files)
    assert transcript.read_bytes() == migrated
    assert open_session(transcript).message_count == 6


def test_concurrent_opens_all_succeed(home: Path, cwd: Path, cli_in_home: Any) -> None:
    original = fixture("legacy_v2.jsonl")
    transcript = install(home, cwd, original)
    processes = [subprocess.Popen([sys.executable, "-m", "commandcode", "sessions", "show", SID, "--json"], cwd=cwd,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert json.loads(out)["message_count"] == 6
    assert len(records(transcript)) == 7
    assert transcript.with_name(f"{SID}.v2.bak").read_bytes() == original
    assert not transcript.with_name(f"{SID}.v2.bak.1").exists()


HOLD_LOCK = """
import sys, time
from pathlib import Path
from commandcode.sessions.lock import WriterLock
lock = WriterLock(Path(sys.argv[1])).acquire()
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_open_waits_for_another_process_holding_the_lock(home: Path, cwd: Path) -> None:
    transcript = install(home, cwd, fixture("legacy_v1.jsonl"))
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(transcript), "1"], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
        started = time.monotonic()
        session = open_session(transcript)
        assert time.monotonic() - started > 0.3
        assert session.message_count == 4
    finally:
        holder.wait(timeout=60)


def test_lock_held_too_long_is_a_clear_error_and_changes_nothing(home: Path, cwd: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    original = fixture("legacy_v1.jsonl")
    transcript = install(home, cwd, original)
    monkeypatch.setattr(migrate, "LOCK_WAIT_SECONDS", 0.2)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(transcript), "30"], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
        with pytest.raises(SessionLockedError, match=f"open for writing by process {holder.pid}"):
            open_session(transcript)
    finally:
        holder.kill()
        holder.wait(timeout=60)
    assert transcript.read_bytes() == original
    assert sorted(path.name for path in transcript.parent.iterdir()) == [transcript.name]


def test_cli_reports_a_failed_migration_in_one_line(home: Path, cwd: Path, cli_in_home: Any) -> None:
    """The transcript's folder cannot take the backup (a directory sits at `<id>.v2.bak.1` and a
    different `.v2.bak` exists): exit 1, one error line, nothing changed."""
    original = fixture("legacy_v1.jsonl")
    transcript = install(home, cwd, original)
    transcript.with_name(f"{SID}.v2.bak").write_bytes(b"older\n")
    transcript.with_name(f"{SID}.v2.bak.1").mkdir()
    code, stdout, stderr = cli_in_home(["sessions", "show", SID, "--json"], cwd)
    assert (code, stdout) == (1, "")
    assert len(stderr.splitlines()) == 1 and stderr.startswith("error: "), stderr
    assert transcript.read_bytes() == original
    assert transcript.with_name(f"{SID}.v2.bak").read_bytes() == b"older\n"
    assert not list(transcript.parent.glob("*.tmp"))
    shutil.rmtree(transcript.with_name(f"{SID}.v2.bak.1"))
