"""The transcript writer and its sidecars (format §2, §4.1–4.3, §4.5, §5).

Through `commandcode.sessions.writer.SessionWriter` directly and through real `commandcode` subprocesses:
buffering until the first assistant message, one write per commit holding whole lines, the entry
envelope, ids and timestamps, torn tails, kill -9 mid-turn, the writer lock, file modes, and
`meta.json` read-merge-write.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from commandcode.config.paths import project_dir
from commandcode.errors import InvalidSessionError, SessionLockedError
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.meta import read_meta, update_meta
from commandcode.sessions.reader import open_session
from commandcode.sessions.writer import SessionWriter
from commandcode.storage import ids
from commandcode.storage.durable import ensure_dir
from commandcode.storage.jsonfmt import dumps_pretty
from helpers.cli import (
    ENTRY_ID,
    ENVELOPE,
    HEADER_KEYS,
    SAMPLE_DATA,
    TIMESTAMP,
    UUID4,
    entries,
    hold_writer,
    kill_group,
    needs_samples,
    only_transcript,
    read_lines,
    run_cli,
    run_json,
    run_ok,
    snapshot,
    start_cli,
    stop,
    transcripts,
    wait_for,
)


def user_message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}],
            "meta": {"source": "user", "createdAt": ids.epoch_ms(), "messageId": ids.new_uuid()}}


def assistant_message(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}],
            "meta": {"source": "model", "createdAt": ids.epoch_ms(), "messageId": ids.new_uuid()}}


def new_files(cwd: Path) -> SessionFiles:
    return SessionFiles(project_dir(cwd), ids.new_uuid())


@pytest.fixture
def write_spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, bytes]]]:
    """Records every `os.write` as (the file written, the bytes)."""
    calls: list[tuple[str, bytes]] = []
    real_write = os.write

    def spy(descriptor: int, data: Any) -> int:
        calls.append((os.path.realpath(f"/proc/self/fd/{descriptor}"), bytes(data)))
        return real_write(descriptor, data)

    monkeypatch.setattr(os, "write", spy)
    yield calls


def make_session(files: SessionFiles, cwd: Path, turns: int = 1) -> list[str]:
    """Writes a session with `turns` user/assistant turns; returns the entry ids."""
    written = []
    with SessionWriter(files, str(cwd)) as writer:
        for turn in range(turns):
            written.append(writer.append_message(user_message(f"prompt {turn}")))
            written.append(writer.append_message(assistant_message(f"reply {turn}"), model="m",
                                                 usage={"inputTokens": 1, "outputTokens": 1}))
            writer.commit()
    return written


# --------------------------------------------------------------------------------------------
# Buffering and writes


def test_new_session_is_buffered_until_the_first_assistant_message(home: Path, workdir: Path,
                                                                   write_spy: list[tuple[str, bytes]]) -> None:
    files = new_files(workdir)
    with SessionWriter(files, str(workdir)) as writer:
        info_id = writer.append_entry("session_info", {"name": "buffered"})
        user_id = writer.append_message(user_message("hello"))
        assert writer.commit() is False  # no assistant message yet: nothing reaches disk
        assert not files.transcript.exists() and not files.directory.exists()
        assert not writer.exists_on_disk
        assistant_id = writer.append_message(assistant_message("hi"), model="m")
        write_spy.clear()
        assert writer.commit() is True
        # The file appears whole: written as a hidden temp file, then linked into place.
        created = os.path.join(os.path.realpath(files.directory), f".{files.transcript.name}.{os.getpid()}.tmp")
        transcript_writes = [data for path, data in write_spy if path in (os.path.realpath(files.transcript), created)]
        assert len(transcript_writes) == 1  # header and buffered entries in one write
        assert transcript_writes[0] == files.transcript.read_bytes()
        lines = read_lines(files.transcript)
        assert [line["type"] for line in lines] == ["session", "session_info", "message", "message"]
        assert [line["id"] for line in lines[1:]] == [info_id, user_id, assistant_id]
        assert [line["parentId"] for line in lines[1:]] == [None, info_id, user_id]
        # afterwards: one write per commit, every write whole lines (JSON and newline together)
        write_spy.clear()
        writer.append_message(user_message("again"))
        writer.append_message(assistant_message("again"))
        writer.commit()
        writer.append_entry("label", {"targetId": user_id, "label": "start"})
        writer.commit()
        transcript_writes = [data for path, data in write_spy if path == os.path.realpath(files.transcript)]
        assert len(transcript_writes) == 2
        for data in transcript_writes:
            assert data.endswith(b"\n")
            assert all(json.loads(line) for line in data.split(b"\n")[:-1])
        assert files.transcript.read_bytes().endswith(transcript_writes[-1])


def test_a_new_session_without_assistant_message_never_reaches_disk(home: Path, workdir: Path) -> None:
    files = new_files(workdir)
    with SessionWriter(files, str(workdir)) as writer:
        writer.append_message(user_message("only a prompt"))
        writer.commit()
    assert not files.transcript.exists()
    # a failed first turn is still recorded when forced, as the real CLI does
    with SessionWriter(files, str(workdir)) as writer:
        writer.append_message(user_message("fails"))
        writer.append_message({"role": "user", "content": [{"type": "text", "text": "Error: boom"}],
                               "meta": {"messageId": ids.new_uuid()}})
        assert writer.commit(force=True)
    assert [entry["message"]["content"][0]["text"] for entry in entries(files.transcript)] == ["fails", "Error: boom"]


def test_uncommitted_entries_stay_in_memory_and_are_dropped_on_close(home: Path, workdir: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    files = new_files(workdir)
    make_session(files, workdir)
    before = files.transcript.read_bytes()
    synced: list[int] = []
    real_fdatasync = os.fdatasync
    monkeypatch.setattr(os, "fdatasync", lambda descriptor: (synced.append(descriptor), real_fdatasync(descriptor))[1])
    with SessionWriter(files, str(workdir)) as writer:
        writer.append_message(user_message("mid-turn"))
        writer.append_message(assistant_message("mid-turn"))
        assert files.transcript.read_bytes() == before  # nothing before the commit
    assert files.transcript.read_bytes() == before  # closed without commit: dropped, as a crash drops them
    assert synced == []
    with SessionWriter(files, str(workdir)) as writer:
        writer.append_message(user_message("committed"))
        writer.commit()
    assert len(synced) == 1  # the commit is flushed to disk
    assert files.transcript.read_bytes().startswith(before)


def test_envelope_and_header_key_order_from_the_cli(home: Path, workdir: Path) -> None:
    (workdir / "f.txt").write_text("one\n")
    run_ok(["-p", 'call read_file {"file_path": "f.txt"}\ncall edit_file {"file_path": "f.txt", '
            '"old_string": "one", "new_string": "two"}\ncall bash {"command": "cat f.txt"}', "-n", "keys", "--yolo"],
           workdir, home)
    transcript = only_transcript(home, workdir)
    run_ok(["-p", "second turn", "-r", "keys"], workdir, home)
    lines = read_lines(transcript)
    assert list(lines[0]) == HEADER_KEYS
    assert lines[0]["version"] == 3 and lines[0]["id"] == transcript.name[:-6] and lines[0]["cwd"] == str(workdir)
    assert len(lines) == 1 + 1 + 8 + 2
    for line in lines[1:]:
        assert list(line)[:4] == ENVELOPE
    assistant = [line for line in lines if line.get("message", {}).get("role") == "assistant"]
    assert all(list(line)[4:] == ["message", "usage", "model"] for line in assistant)
    assert list(lines[1]) == [*ENVELOPE, "name"]
    # compact JSON, one object per line, newline-terminated
    raw = transcript.read_bytes()
    assert raw.endswith(b"\n") and b": " not in raw.split(b"\n")[0]
    assert [json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() for line in lines] == raw.split(b"\n")[:-1]


# --------------------------------------------------------------------------------------------
# Ids and timestamps


def test_ids_and_timestamps_have_the_real_shapes(home: Path, workdir: Path) -> None:
    for turn in range(3):
        run_ok(["-p", f'call bash {{"command": "echo {turn}"}}', "--yolo", *(["-c"] if turn else [])], workdir, home)
    transcript = only_transcript(home, workdir)
    session_id = transcript.name[: -len(".jsonl")]
    assert UUID4.match(session_id) and uuid.UUID(session_id).version == 4
    lines = read_lines(transcript)
    assert TIMESTAMP.match(lines[0]["timestamp"])
    assert lines[0]["timestamp"] <= lines[1]["timestamp"]  # the header is stamped when the session starts
    entry_ids = [line["id"] for line in lines[1:]]
    assert len(entry_ids) == 12
    assert all(ENTRY_ID.match(entry_id) for entry_id in entry_ids)
    assert len(set(entry_ids)) == len(entry_ids)
    for line in lines[1:]:
        assert TIMESTAMP.match(line["timestamp"])
        meta = line["message"]["meta"]
        assert UUID4.match(meta["messageId"])
        if meta["source"] == "tool":
            assert "createdAt" not in meta  # tool results carry none, as in the real files
        else:
            assert isinstance(meta["createdAt"], int) and meta["createdAt"] > 1_600_000_000_000
    assert ids.iso_from_ms(1767323045678) == "2026-01-02T03:04:05.678Z"
    # the bounds epoch_ms_value lets through, as JavaScript's toISOString writes them
    assert ids.iso_from_ms(-62_135_596_800_000) == "0001-01-01T00:00:00.000Z"
    assert ids.iso_from_ms(253_402_300_799_999) == "9999-12-31T23:59:59.999Z"
    assert ids.iso_from_ms(-1) == "1969-12-31T23:59:59.999Z"
    assert ids.iso_from_ms(1767323045000) == "2026-01-02T03:04:05.000Z"
    assert TIMESTAMP.match(ids.iso_now())


def test_entry_ids_are_unique_within_the_file(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = new_files(workdir)
    existing = make_session(files, workdir)
    # the next uuids start with the ids already in the file, then with one this writer just used
    fresh = "abcdef01"
    sequence = iter([existing[0], existing[1], fresh, fresh, existing[0], "0badc0de"])
    monkeypatch.setattr(ids, "fresh_entry_id", lambda: next(sequence))
    with SessionWriter(files, str(workdir)) as writer:
        first = writer.append_message(user_message("x"))
        second = writer.append_message(assistant_message("y"))
        writer.commit()
    assert (first, second) == (fresh, "0badc0de")
    written = [entry["id"] for entry in entries(files.transcript)]
    assert len(set(written)) == len(written) == 4


def test_entry_id_falls_back_to_a_full_uuid_after_100_collisions(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = {"00000000"}
    calls = iter(["00000000"] * 100)
    monkeypatch.setattr(ids, "fresh_entry_id", lambda: next(calls))
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID("12345678-1234-4234-8234-123456789abc"))
    assert ids.new_entry_id(taken) == "12345678-1234-4234-8234-123456789abc"


def test_entry_fields_cannot_override_the_envelope(home: Path, workdir: Path) -> None:
    with SessionWriter(new_files(workdir), str(workdir)) as writer:
        with pytest.raises(InvalidSessionError):
            writer.append_entry("custom", {"customType": "x", "id": "deadbeef"})
        with pytest.raises(InvalidSessionError):
            writer.append_entry("not_a_type", {})


# --------------------------------------------------------------------------------------------
# Torn tails

TORN = b'{"type":"message","id":"deadbeef","parentId":"x'


def test_append_after_a_torn_tail_via_the_writer(home: Path, workdir: Path) -> None:
    files = new_files(workdir)
    written = make_session(files, workdir)
    original = files.transcript.read_bytes()
    with open(files.transcript, "ab") as handle:
        handle.write(TORN)
    session = open_session(files.transcript)
    assert session.leaf_id == written[-1]
    [skipped] = session.skipped_lines
    assert (skipped.line, skipped.offset) == (4, len(original))
    with SessionWriter(files, str(workdir)) as writer:
        user_id = writer.append_message(user_message("after the tear"))
        assistant_id = writer.append_message(assistant_message("still here"))
        writer.commit()
    raw = files.transcript.read_bytes()
    assert raw.startswith(original + TORN + b"\n")  # the fragment is kept byte for byte, then ended
    new_lines = raw[len(original + TORN + b"\n"):].split(b"\n")
    assert new_lines[-1] == b""
    parsed = [json.loads(line) for line in new_lines[:-1]]  # nothing glued: every new line parses
    assert [entry["id"] for entry in parsed] == [user_id, assistant_id]
    assert parsed[0]["parentId"] == written[-1]  # the torn line never becomes a parent
    session = open_session(files.transcript)
    assert session.leaf_id == assistant_id
    assert [(line.line, line.offset) for line in session.skipped_lines] == [(4, len(original))]
    assert session.context().entry_ids == [*written, user_id, assistant_id]


def test_append_after_a_complete_last_line_without_newline(home: Path, workdir: Path) -> None:
    files = new_files(workdir)
    written = make_session(files, workdir)
    raw = files.transcript.read_bytes()
    files.transcript.write_bytes(raw[:-1])  # a valid last line, just not terminated
    with SessionWriter(files, str(workdir)) as writer:
        writer.append_message(user_message("next"))
        writer.commit()
    assert files.transcript.read_bytes().startswith(raw)
    lines = read_lines(files.transcript)
    assert lines[-1]["parentId"] == written[-1]
    assert open_session(files.transcript).skipped_lines == []


def test_append_after_a_torn_tail_via_the_cli(home: Path, workdir: Path) -> None:
    run_ok(["-p", "first", "-n", "torn session"], workdir, home)
    transcript = only_transcript(home, workdir)
    leaf = entries(transcript)[-1]["id"]
    with open(transcript, "ab") as handle:
        handle.write(TORN)
    torn_bytes = transcript.read_bytes()
    shown = run_json(["sessions", "show", "torn session", "--json"], workdir, home)
    assert [(line["line"], line["offset"], line["reason"]) for line in shown["skipped_lines"]] == \
        [(5, len(torn_bytes) - len(TORN), "torn tail without newline")]
    completed = run_cli(["-p", "second", "-r", "TORN SESSION "], workdir, home)
    assert completed.returncode == 0
    assert completed.stdout == "Offline model reply. You said: second\n"
    assert "1 unreadable line(s) skipped" in completed.stderr
    raw = transcript.read_bytes()
    assert raw.startswith(torn_bytes + b"\n")
    new = [json.loads(line) for line in raw[len(torn_bytes) + 1:].splitlines()]
    assert [entry["message"]["role"] for entry in new] == ["user", "assistant"]
    assert new[0]["parentId"] == leaf
    shown = run_json(["sessions", "show", "torn session", "--json"], workdir, home)
    assert shown["leaf"] == new[-1]["id"] and shown["message_count"] == 4
    assert [(line["line"], line["offset"]) for line in shown["skipped_lines"]] == [(5, len(torn_bytes) - len(TORN))]


# --------------------------------------------------------------------------------------------
# kill -9 mid-turn

SLOW_TURN = 'call bash {"command": "touch started && sleep 30"}'


def test_kill_mid_turn_leaves_the_file_at_the_previous_commit(home: Path, workdir: Path) -> None:
    run_ok(["-p", "a committed turn"], workdir, home)
    transcript = only_transcript(home, workdir)
    session_id = transcript.name[:-6]
    committed = transcript.read_bytes()
    process = start_cli(["-p", SLOW_TURN, "-r", session_id, "--yolo"], workdir, home)
    try:
        wait_for(lambda: (workdir / "started").exists(), what="the bash tool to start")
    finally:
        kill_group(process)
    assert process.returncode == -9
    assert transcript.read_bytes() == committed  # the turn's user and tool_use entries never reached disk
    shown = run_json(["sessions", "show", session_id, "--json"], workdir, home)
    assert shown["skipped_lines"] == [] and shown["message_count"] == 2
    # the kernel dropped the killed writer's lock: the session can be resumed at once
    assert run_ok(["-p", "after the crash", "-r", session_id], workdir, home).stdout.startswith("Offline model reply")
    assert transcript.read_bytes().startswith(committed)
    assert len(entries(transcript)) == 4


def test_kill_during_the_first_turn_leaves_no_transcript(home: Path, workdir: Path) -> None:
    process = start_cli(["-p", SLOW_TURN, "--yolo"], workdir, home)
    try:
        wait_for(lambda: (workdir / "started").exists(), what="the bash tool to start")
    finally:
        kill_group(process)
    assert transcripts(home) == []
    assert run_json(["sessions", "list", "--json"], workdir, home) == []
    # what the killed turn left (its checkpoint, for a rewind of what it changed) is only a leftover
    assert all(row["leftover"] and row["message_count"] == 0
               for row in run_json(["sessions", "list", "--all", "--json"], workdir, home))


# --------------------------------------------------------------------------------------------
# The writer lock


def test_a_second_writer_is_refused_while_reading_works(home: Path, workdir: Path) -> None:
    run_ok(["-p", "locked session"], workdir, home)
    transcript = only_transcript(home, workdir)
    session_id = transcript.name[:-6]
    before = transcript.read_bytes()
    holder = hold_writer(transcript, workdir, home)
    try:
        completed = run_cli(["-p", "second writer", "-r", session_id], workdir, home)
        assert completed.returncode == 1
        error, hint = completed.stderr.splitlines()
        assert error == f"error: session {transcript.name} is open for writing by process {holder.pid}"
        assert hint.startswith("hint: ")
        assert completed.stdout == ""
        # in-process too, with the holder's pid on the exception
        with pytest.raises(SessionLockedError) as raised:
            with SessionWriter(SessionFiles.for_transcript(transcript), str(workdir)):
                pass
        assert raised.value.holder_pid == holder.pid and str(holder.pid) in str(raised.value)
        # reading never needs the lock
        shown = run_json(["sessions", "show", session_id, "--json"], workdir, home)
        assert shown["message_count"] == 2
        assert run_json(["sessions", "context", session_id, "--json"], workdir, home)["leaf"] == shown["leaf"]
        assert transcript.read_bytes() == before
    finally:
        stop(holder)
    run_ok(["-p", "now it is free", "-r", session_id], workdir, home)
    assert len(entries(transcript)) == 4


def test_a_second_writer_in_the_same_process_is_refused(home: Path, workdir: Path) -> None:
    files = new_files(workdir)
    with SessionWriter(files, str(workdir)):
        with pytest.raises(SessionLockedError) as raised, SessionWriter(files, str(workdir)):
            pass
        assert raised.value.holder_pid == os.getpid()
    with SessionWriter(files, str(workdir)):  # released on close
        pass


def test_no_session_writer_takes_no_lock(home: Path, workdir: Path) -> None:
    files = new_files(workdir)
    make_session(files, workdir)
    holder = hold_writer(files.transcript, workdir, home)
    try:
        with SessionWriter(files, str(workdir), persist=False) as writer:
            writer.append_message(assistant_message("in memory"))
            assert writer.commit() is False
    finally:
        stop(holder)


# --------------------------------------------------------------------------------------------
# File modes


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.usefixtures("umask_022")
def test_new_files_are_0600_and_new_folders_0700(home: Path, workdir: Path) -> None:
    (workdir / "existing.txt").write_text("before\n")
    assert not home.exists()
    run_ok(["-p", 'call edit_file {"file_path": "existing.txt", "old_string": "before", "new_string": "after"}\n'
            'call write_file {"file_path": "new.txt", "content": "x"}', "-n", "modes"], workdir, home)
    transcript = only_transcript(home, workdir)
    files = SessionFiles.for_transcript(transcript)
    from commandcode.sessions.history import record_prompt

    record_prompt("the interactive shell records prompts")  # -p never writes the history
    for path in (transcript, files.meta, files.checkpoints, home / "history.jsonl"):
        assert path.exists() and mode(path) == 0o600, path
    folders = [Path(folder) for folder, _, _ in os.walk(home)]
    assert {home, home / "projects", transcript.parent} <= set(folders)
    for folder in folders:
        assert mode(folder) == 0o700, folder
    for folder, _, names in os.walk(home):
        for name in names:
            assert mode(Path(folder) / name) & 0o077 == 0, name  # nothing readable by others
    # the user's own files keep the ordinary umask
    assert mode(workdir / "new.txt") == 0o644


def test_modes_do_not_depend_on_the_umask(home: Path, workdir: Path) -> None:
    previous = os.umask(0)
    try:
        files = new_files(workdir)
        make_session(files, workdir)
        update_meta(files.meta, {"title": "t"})
    finally:
        os.umask(previous)
    assert mode(files.transcript) == 0o600 and mode(files.meta) == 0o600
    assert mode(files.directory) == 0o700 and mode(home) == 0o700 and mode(home / "projects") == 0o700


@pytest.mark.usefixtures("umask_022")
def test_ensure_dir_leaves_existing_folders_alone(tmp_path: Path) -> None:
    existing = tmp_path / "existing"
    existing.mkdir(mode=0o755)
    ensure_dir(existing / "a" / "b")
    assert mode(existing) == 0o755
    assert mode(existing / "a") == 0o700 and mode(existing / "a" / "b") == 0o700
    (tmp_path / "file").write_text("")
    with pytest.raises(FileExistsError):
        ensure_dir(tmp_path / "file")
    with pytest.raises(NotADirectoryError):
        ensure_dir(tmp_path / "file" / "below")


# --------------------------------------------------------------------------------------------
# meta.json


def test_meta_read_merge_write(tmp_path: Path) -> None:
    path = tmp_path / "s.meta.json"
    path.write_text('{\n  "entrypoint": "print",\n  "custom": {"kept": [1, 2]},\n  "goal": null,\n  "title": "old"\n}')
    merged = update_meta(path, {"title": "new", "userRenamed": True, "model": None})
    assert merged == {"entrypoint": "print", "custom": {"kept": [1, 2]}, "goal": None, "title": "new", "userRenamed": True}
    assert list(merged) == ["entrypoint", "custom", "goal", "title", "userRenamed"]  # {...old, ...patch}
    assert path.read_text() == (
        '{\n  "entrypoint": "print",\n  "custom": {\n    "kept": [\n      1,\n      2\n    ]\n  },\n'
        '  "goal": null,\n  "title": "new",\n  "userRenamed": true\n}'
    )  # JSON.stringify(meta, null, 2): 2-space indent, no trailing newline
    update_meta(path, {"title": None, "entrypoint": None})  # a None value removes the key
    assert read_meta(path) == {"custom": {"kept": [1, 2]}, "goal": None, "userRenamed": True}
    assert not path.read_text().endswith("\n")
    fresh = tmp_path / "new.meta.json"
    assert update_meta(fresh, {"title": "ünï", "skip": None}) == {"title": "ünï"}
    assert fresh.read_text(encoding="utf-8") == '{\n  "title": "ünï"\n}'
    assert sorted(os.listdir(tmp_path)) == ["new.meta.json", "s.meta.json"]  # no temp files left


@needs_samples
@pytest.mark.parametrize("name", ["1ccb4627-5286-46c5-84a9-ce35adae899d", "8c45bc8f-52ff-4316-9d99-c798b511460d",
                                  "9e07fc17-d9dc-44f4-9ea9-6398425fd60d"])
def test_meta_text_matches_the_real_cli(name: str) -> None:
    sample = SAMPLE_DATA / "projects" / "home-dev-proj" / f"{name}.meta.json"
    raw = sample.read_text(encoding="utf-8")
    assert dumps_pretty(json.loads(raw)) == raw


def test_meta_update_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.meta.json"
    path.write_text('{\n  "title": "old"\n}')
    before = path.read_bytes()

    def failing_replace(source: Any, target: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        update_meta(path, {"title": "new"})
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["s.meta.json"]  # the temp file was removed


@pytest.mark.parametrize("content", [b"[1, 2]", b'"a string"', b"42", b"null", b'{"title": "unterminated',
                                     b"\xff\xfe{}", b'{"a": NaN}'])
def test_meta_that_is_not_an_object_is_refused_and_left_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "s.meta.json"
    path.write_bytes(content)
    with pytest.raises(InvalidSessionError) as raised:
        update_meta(path, {"title": "x"})
    assert "not a JSON object" in str(raised.value) and raised.value.hint
    assert path.read_bytes() == content
    assert os.listdir(tmp_path) == ["s.meta.json"]
    assert read_meta(path) == {}  # reading tolerates it


def without_locks(tree: dict[str, Any]) -> dict[str, Any]:
    return {path: value for path, value in tree.items() if not path.startswith("locks/")}


def test_cli_refuses_a_bad_meta_before_running_the_turn(home: Path, workdir: Path) -> None:
    run_ok(["-p", "first"], workdir, home)
    transcript = only_transcript(home, workdir)
    meta = SessionFiles.for_transcript(transcript).meta
    meta.write_bytes(b"[]")
    before = without_locks(snapshot(home))
    completed = run_cli(["-p", "rename me", "-r", transcript.name[:-6], "-n", "new name"], workdir, home)
    assert completed.returncode == 1
    error, hint = completed.stderr.splitlines()
    assert error.startswith("error: ") and "meta.json is not a JSON object" in error
    assert hint.startswith("hint: ")
    assert without_locks(snapshot(home)) == before  # neither the meta nor the transcript changed
    # a bad meta does not stop a plain resume (nothing needs to be merged into it)
    run_ok(["-p", "no rename", "-r", transcript.name[:-6]], workdir, home)
    assert meta.read_bytes() == b"[]"


# --------------------------------------------------------------------------------------------
# A headless session that fails is still labelled as one


def test_a_failed_first_turn_is_recorded_and_labelled_print(home: Path, workdir: Path) -> None:
    script = (
        "import sys\n"
        "from commandcode.agent.providers import offline\n"
        "def broken(self, messages, **options):\n"
        "    raise RuntimeError('model exploded')\n"
        "offline.OfflineModel.respond = broken\n"
        "sys.argv = ['commandcode', '-p', 'will fail']\n"
        "from commandcode.cli import main\n"
        "main()\n"
    )
    env = {**os.environ, "COMMANDCODE_HOME": str(home), "COMMANDCODE_INDEX": "off"}
    completed = subprocess.run([sys.executable, "-c", script], cwd=workdir, env=env, capture_output=True, text=True,
                               timeout=60)
    assert completed.returncode == 1
    assert completed.stderr.splitlines() == ["error: the turn failed: model exploded"]
    transcript = only_transcript(home, workdir)
    assert [entry["message"]["content"][0]["text"] for entry in entries(transcript)] == \
        ["will fail", "Error: model exploded"]
    assert read_meta(SessionFiles.for_transcript(transcript).meta)["entrypoint"] == "print"
