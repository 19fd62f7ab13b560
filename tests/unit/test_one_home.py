"""One home for each rule: the env flags, the header timestamp, the token estimate, durable
writes and JSONL reading each live in one module, and the twins that used to disagree now give
the real CLI's answer. Each matrix below fails if one of the old twins came back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from commandcode.sessions import history
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.format import created_timestamp
from commandcode.sessions.reader import open_session
from commandcode.sessions.tokens import estimate_tokens
from commandcode.sessions.writer import SessionWriter
from commandcode.storage import durable
from commandcode.storage.ids import iso_from_ms
from commandcode.storage.jsonl import first_value_in_file, iter_objects, iter_values
from helpers.cli import cli_env, only_transcript, run_ok

# --------------------------------------------------------------------------------------------
# Environment flags: one rule (trimmed, case-insensitive) for every COMMANDCODE_* flag

OFF_SPELLINGS = ["off", " off", "OFF ", "\toff\n", "0", " 0 ", "false", "False", " no", "NO\n"]
ON_SPELLINGS = ["", "on", "1", "yes", "offline"]
_PROBE = ("import sys; from commandcode.cli import run; code = run(sys.argv[1:]); "
          "sys.stdout.flush(); sys.stderr.write(' '.join(sorted(sys.modules))); sys.exit(code)")


@pytest.mark.parametrize("value", OFF_SPELLINGS + ON_SPELLINGS)
def test_the_fast_path_flag_reads_as_every_flag_does(home: Path, workdir: Path, value: str) -> None:
    completed = subprocess.run([sys.executable, "-c", _PROBE, "sessions", "list"], cwd=workdir,
                               env=cli_env(home, COMMANDCODE_FAST_PATH=value), capture_output=True, text=True,
                               check=True)
    through_typer = "typer" in completed.stderr.split()
    assert through_typer == (value in OFF_SPELLINGS), repr(value)


@pytest.mark.parametrize("value", OFF_SPELLINGS + ON_SPELLINGS)
def test_the_index_flag_reads_as_every_flag_does(home: Path, workdir: Path, value: str) -> None:
    run_ok(["-p", "hello"], workdir, home)
    transcript = only_transcript(home, workdir)
    shutil.rmtree(home / "index", ignore_errors=True)
    subprocess.run([sys.executable, "-m", "commandcode", "sessions", "context", str(transcript), "--stats"],
                   cwd=workdir, env=cli_env(home, COMMANDCODE_INDEX=value), capture_output=True, check=True)
    sidecars = list((home / "index").rglob("*.idx")) if (home / "index").exists() else []
    assert bool(sidecars) == (value not in OFF_SPELLINGS), repr(value)


# --------------------------------------------------------------------------------------------
# The header timestamp: a synthesized header (no header line) and a migrated legacy file agree

FILE_TIME_MS = 1_577_836_800_000  # 2020-01-01T00:00:00.000Z, set as the transcript's mtime
CREATED_CASES: list[tuple[str, str | None]] = [
    ("1767323046099", "2026-01-02T03:04:06.099Z"),
    ('"2026-01-02T03:04:05.678Z"', "2026-01-02T03:04:05.678Z"),
    ("true", None), ("false", None), ("null", None), ("[]", None), ("{}", None), ('"not a date"', None),
    ('""', None), ("1e400", None), ("-1e400", None), ("1e20", None), ("-1e20", None),
]


def _place(folder: Path, session_id: str, transcript: bytes, created: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_bytes(transcript)
    (folder / f"{session_id}.meta.json").write_text('{"createdAt": ' + created + "}")
    os.utime(path, ns=(FILE_TIME_MS * 1_000_000, FILE_TIME_MS * 1_000_000))
    return path


@pytest.mark.parametrize("created, expected", CREATED_CASES)
def test_a_header_timestamp_follows_one_rule(home: Path, tmp_path: Path, created: str, expected: str | None) -> None:
    wanted = expected or iso_from_ms(FILE_TIME_MS)
    headerless = _place(tmp_path / "v3", "a" * 8, b'{"type":"message","id":"m1","parentId":null,'
                        b'"timestamp":"2026-01-02T03:04:07.000Z","message":{"role":"user","content":"hi"}}\n', created)
    synthesized = open_session(headerless).header
    assert synthesized.synthesized and synthesized.timestamp == wanted
    legacy = _place(tmp_path / "v2", "b" * 8, b'{"id":"x","timestamp":"2026-01-02T03:04:07.000Z","role":"user",'
                    b'"content":"hi","metadata":{"version":2}}\n', created)
    migrated = open_session(legacy).header
    assert not migrated.synthesized and migrated.timestamp == wanted
    assert json.loads(legacy.read_text().splitlines()[0])["timestamp"] == wanted


@pytest.mark.parametrize("value", [True, False, float("inf"), float("nan"), 10**30, -(10**30), [], {}, None, "x"])
def test_values_that_are_no_time_give_none(value: Any) -> None:
    assert created_timestamp(value) is None


def test_a_legacy_record_time_follows_the_same_rule(home: Path, tmp_path: Path) -> None:
    """A legacy line's own `timestamp` true/1e400 is no time either: the entry gets one, never 1970
    or a traceback."""
    legacy = _place(tmp_path / "v2", "c" * 8, b'{"id":"x","timestamp":true,"role":"user","content":"one",'
                    b'"metadata":{"version":2}}\n{"id":"y","timestamp":1e400,"role":"assistant","content":"two",'
                    b'"metadata":{"version":2}}\n', "null")
    session = open_session(legacy)
    stamps = [json.loads(line)["timestamp"] for line in legacy.read_text().splitlines()[1:]]
    assert len(stamps) == 2 and session.message_count == 2
    assert all(not stamp.startswith("1970") for stamp in stamps), stamps


# --------------------------------------------------------------------------------------------
# The token estimate: ceil(len(JSON.stringify(block)) / 4) per block, 1,500 per image

BLOCKS: list[dict[str, Any]] = [
    {"type": "text", "text": "hi"},
    {"type": "text", "text": "é ü ß and 漢字"},
    {"type": "text", "text": "emoji 😀🎉 count twice in JavaScript"},
    {"type": "text", "text": "quotes \" and \\ and \n newlines \t tabs \u2028"},
    {"type": "tool_use", "id": "call_1", "name": "write_file", "input": {"file_path": "a", "content": "x" * 37}},
    {"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "ok"}]},
    {"type": "thinking", "thinking": "numbers 1.5 1e21 100000000000000000000 -0.0 3.0 as text", "signature": ""},
    {"type": "text", "text": "a\u0001control"},
]
NUMBERS_BLOCK = {"type": "x", "n": [1.5, 1e21, 10**20, -7, 0.1]}  # an integral float (3.0) is JSON text "3.0" to us, "3" to JSON.stringify


def _node_estimate(blocks: list[dict[str, Any]]) -> int:
    script = ("let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const b=JSON.parse(s);"
              "console.log(b.reduce((t,x)=>t+(x.type==='image'?1500:Math.ceil(JSON.stringify(x).length/4)),0))})")
    completed = subprocess.run(["node", "-e", script], input=json.dumps(blocks), capture_output=True, text=True,
                               check=True, timeout=60)
    return int(completed.stdout)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("block", BLOCKS + [NUMBERS_BLOCK], ids=lambda block: str(block.get("text", block["type"]))[:20])
def test_the_token_estimate_is_javascripts(block: dict[str, Any]) -> None:
    assert estimate_tokens([{"role": "user", "content": [block]}]) == _node_estimate([block])


def test_images_count_1500_and_a_string_content_is_one_text_block() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 100_000}}
    assert estimate_tokens([{"role": "user", "content": [image, image]}]) == 3000
    as_string = estimate_tokens([{"role": "user", "content": "hello there"}])
    assert as_string == estimate_tokens([{"role": "user", "content": [{"type": "text", "text": "hello there"}]}])
    assert as_string == -(-len('{"type":"text","text":"hello there"}') // 4)


def test_the_offline_model_reports_the_same_estimate(home: Path, workdir: Path) -> None:
    run_ok(["-p", "count me 😀"], workdir, home)
    lines = [json.loads(line) for line in only_transcript(home, workdir).read_text().splitlines()]
    user, assistant = lines[1], lines[2]
    assert assistant["usage"]["inputTokens"] == estimate_tokens([user["message"]])
    assert assistant["usage"]["outputTokens"] == estimate_tokens([assistant["message"]])


# --------------------------------------------------------------------------------------------
# Durable writes: every write of ours survives short writes (one loop, `durable.write_all`)


@pytest.fixture
def short_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """`os.write` takes at most 5 bytes per call, as a kernel may; records each call's size."""
    real_write = os.write
    calls: list[int] = []

    def write(descriptor: int, data: Any) -> int:
        calls.append(len(data))
        return real_write(descriptor, bytes(data[:5]))

    monkeypatch.setattr(os, "write", write)
    return calls


def test_atomic_and_new_files_are_whole_after_short_writes(tmp_path: Path, short_writes: list[int]) -> None:
    data = b"0123456789" * 30
    durable.atomic_write(tmp_path / "a", data)
    durable.create_new_file(tmp_path / "b", data)
    assert (tmp_path / "a").read_bytes() == data and (tmp_path / "b").read_bytes() == data
    assert len(short_writes) >= 2 * (len(data) // 5)


def test_a_transcript_is_whole_after_short_writes(home: Path, tmp_path: Path, short_writes: list[int]) -> None:
    files = SessionFiles(tmp_path / "project", "s" * 8)
    with SessionWriter(files, str(tmp_path)) as writer:  # created (header and first entries in one write)
        writer.append_message({"role": "user", "content": [{"type": "text", "text": "x" * 200}]})
        writer.append_message({"role": "assistant", "content": [{"type": "text", "text": "y" * 200}]})
        writer.commit()
    with SessionWriter(files, str(tmp_path)) as writer:  # appended
        writer.append_message({"role": "user", "content": [{"type": "text", "text": "z" * 200}]})
        writer.commit(force=True)
    session = open_session(files.transcript)
    assert session.skipped_lines == [] and session.message_count == 3


def test_the_prompt_history_is_whole_after_short_writes(home: Path, short_writes: list[int]) -> None:
    history.record_prompt("a prompt that is longer than five bytes")
    history.record_prompt("and a second one")
    records = [json.loads(line) for line in (home / "history.jsonl").read_text().splitlines()]
    assert [record["p"] for record in records] == ["a prompt that is longer than five bytes", "and a second one"]


# --------------------------------------------------------------------------------------------
# JSONL reading: JavaScript's line rules, in one loop


def test_lines_end_at_newline_only_and_broken_lines_are_skipped() -> None:
    data = ('{"a": "line\u2028separator"}\n\n   \n{"b": 1}\r\n[1, 2]\nnot json\n' + "[" * 100_000 + "\n"
            ).encode() + b'{"c": "\xff"}\n{"torn": '
    assert list(iter_values(data)) == [{"a": "line\u2028separator"}, {"b": 1}, [1, 2], {"c": "\ufffd"}]
    assert list(iter_objects(data)) == [{"a": "line\u2028separator"}, {"b": 1}, {"c": "\ufffd"}]


def test_a_byte_order_mark_is_dropped_only_when_asked() -> None:
    data = '\ufeff{"a": 1}\n{"b": 2}\n'.encode()
    assert list(iter_objects(data)) == [{"b": 2}]  # as JSON.parse fails on it
    assert list(iter_objects(data, strip_bom=True)) == [{"a": 1}, {"b": 2}]


def test_the_header_peek_reads_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'\n  \n{"type": "session", "cwd": "/w"}\n' + b"x" * 1_000_000)
    assert first_value_in_file(path) == (True, {"type": "session", "cwd": "/w"})
    path.write_bytes(b"")
    assert first_value_in_file(path) == (False, None)
