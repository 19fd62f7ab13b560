"""The native scanner through its binding: huge lines, raw context reads, lookups that must not
decode the whole entry list, and the `source` an index reports.

Owns: Python tests of `commandcode._native.scan_session` / `SessionIndex` beyond the sidecar
property test (`test_index_property.py`). Imports the native module directly.
"""

from __future__ import annotations

import json
from pathlib import Path

import commandcode._native as native

HEADER = {"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}


def line(entry_id: str, parent: str | None, role: str, text: str) -> str:
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}]},
    }
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def write(path: Path, lines: list[str], *, trailing_newline: bool = True) -> None:
    path.write_text("\n".join(lines) + ("\n" if trailing_newline else ""), encoding="utf-8")


def test_a_line_far_larger_than_a_read_piece_opens(tmp_path: Path) -> None:
    transcript = tmp_path / "huge.jsonl"
    big = 'log "quoted" \\ path\n\tindented é → ' * 400_000  # ~14 MB once escaped
    write(transcript, [json.dumps(HEADER), line("a1", None, "user", "go"), line("a2", "a1", "user", big),
                       line("a3", "a2", "assistant", "done")])
    index = native.scan_session(transcript)
    assert index.entry_count == 3 and index.skipped == []
    context = index.read_context()
    assert context[1]["message"]["content"][0]["text"] == big
    raw = index.read_context_raw()
    assert [json.loads(item) for item in raw] == context


def test_raw_context_is_the_lines_as_written(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    lines = [json.dumps(HEADER), line("a1", None, "user", "é"), line("a2", "a1", "assistant", "ok")]
    write(transcript, lines)
    index = native.scan_session(transcript)
    assert index.read_context_raw() == [lines[1].encode(), lines[2].encode()]
    assert index.source == "tail"
    whole = native.scan_session(transcript, tail=False)
    assert whole.read_context_raw() == index.read_context_raw()
    assert whole.source == "scanned"


def test_lookups_of_absent_ids_need_no_entry_list(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    sidecar = tmp_path / "index" / "s.idx"
    write(transcript, [json.dumps(HEADER)] + [line(f"e{n}", f"e{n - 1}" if n else None, "user", "x") for n in range(100)])
    native.scan_session(transcript, sidecar, tail=False)  # writes the sidecar
    index = native.scan_session(transcript, sidecar)
    assert index.source == "loaded"
    assert "e5" in index and "nope" not in index
    try:
        index.envelope("nope")
    except KeyError:
        pass
    else:  # pragma: no cover
        raise AssertionError("envelope of an absent id")
    assert index.envelope("e5")[0] == "message"
    assert [entry["id"] for entry in index.read_first_users(2)] == ["e0", "e1"]
    assert [entry["id"] for entry in index.read_entries(["e1", "e0"])] == ["e1", "e0"]


def test_index_sources(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    sidecar = tmp_path / "index" / "s.idx"
    write(transcript, [json.dumps(HEADER), line("a1", None, "user", "x")])
    # A first contact reads the tail and leaves an empty mark; the second contact writes the sidecar.
    assert native.scan_session(transcript, sidecar).source == "tail"
    assert native.scan_session(transcript, sidecar).source == "rebuilt"
    assert native.scan_session(transcript, sidecar).source == "loaded"
    with transcript.open("a") as file:
        file.write(line("a2", "a1", "assistant", "y") + "\n")
    assert native.scan_session(transcript, sidecar).source == "appended"
    with transcript.open("a") as file:
        file.write(line("b1", None, "user", "z") + "\n" + line("a1", "b1", "user", "dup") + "\n")
    assert native.scan_session(transcript, sidecar).source == "appended_rewritten"
    transcript.write_text(transcript.read_text()[:-10])
    assert native.scan_session(transcript, sidecar).source == "rebuilt"


def test_context_lines_json_parse_accepts_are_read(tmp_path: Path) -> None:
    """Lone surrogate escapes and invalid UTF-8 are valid for `JSON.parse` (after the real CLI's
    lossy decoding), so the scanner keeps such lines and reading them must not fail."""
    transcript = tmp_path / "s.jsonl"
    lone = '{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"x \\ud800 y \\udc00\\ud83d\\ude00"}]}}'
    transcript.write_bytes(
        (json.dumps(HEADER) + "\n" + lone + "\n").encode()
        + b'{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"bad \xff byte"}]}}\n'
    )
    index = native.scan_session(transcript)
    assert index.skipped == []
    first, second = index.read_context()
    assert first["message"]["content"][0]["text"] == "x \ud800 y \udc00\U0001f600"
    assert second["message"]["content"][0]["text"] == "bad \ufffd byte"


def test_entries_read_in_any_order_and_grouping_are_their_lines(tmp_path: Path) -> None:
    # Lines that follow one another in the file are read together (one pread per run, in
    # batches of about 16 KiB): any order, repetition, gap, or a line far longer than a batch
    # must still give each asked-for entry exactly as its own line.
    transcript = tmp_path / "s.jsonl"
    texts = ["x" * (index * 7919 % 40_000) + f"é{index}→" for index in range(40)]
    lines = [line(f"e{index}", f"e{index - 1}" if index else None, "user" if index % 2 else "assistant", text)
             for index, text in enumerate(texts)]
    write(transcript, [json.dumps(HEADER), *lines])
    index = native.scan_session(transcript)
    by_id = {f"e{position}": json.loads(text) for position, text in enumerate(lines)}
    orders = [list(by_id), list(reversed(by_id)), list(by_id)[::3], ["e5", "e6", "e6", "e7", "e9", "e10", "e4", "e5"],
              [*list(by_id)[10:20], *list(by_id)[:10]]]
    for ids in orders:
        assert index.read_entries(ids) == [by_id[entry_id] for entry_id in ids], ids
    context_ids = list(index.context_plan()[0])
    assert index.read_context() == [by_id[entry_id] for entry_id in context_ids]
