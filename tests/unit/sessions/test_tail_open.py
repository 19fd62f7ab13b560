"""Opening a session from the end of its transcript (issue 30): the context, and everything else a
session offers, must be what the whole scan gives.

Owns: the Python side of `index::tail` — `_native.scan_session(path)` (which reads the end first)
against `scan_session(path, tail=False)` (the whole scan) on the real CLI's samples, the bad-input
corpus and crafted long sessions; `open_session(...).context()` and the `sessions context` command
on them; the tree and the stats after a tail open; and the index sidecar it writes only when the
whole session is needed. The exactness of the tail itself is `rust/src/index/tail.rs`'s property
test.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import commandcode._native as native
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.reader import Session, open_session
from helpers.cli import cli_env
from helpers.locations import FIXTURES, SAMPLES_HOME

HEADER = {"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
# Every query of `SessionIndex` without arguments, compared between the two opens.
QUERIES = ("format", "header", "legacy_entrypoint", "file_size", "ends_with_newline", "has_bom", "line_count",
           "entry_count", "skipped", "anomalies", "leaf_id", "path_length", "name", "model", "effort",
           "message_count", "last_timestamp")


def corpus() -> list[Path]:
    samples = sorted((SAMPLES_HOME / ".commandcode" / "projects").glob("*/*.jsonl"))
    fixtures = sorted(FIXTURES.glob("*.jsonl")) + sorted((FIXTURES / "hostile").glob("*.jsonl"))
    return [path for path in samples + fixtures if not path.name.endswith(".checkpoints.jsonl")]


def facts(index: native.SessionIndex) -> dict[str, Any]:
    """Everything an index answers, the context read included."""
    answers: dict[str, Any] = {name: getattr(index, name) for name in QUERIES}
    answers["context_plan"] = index.context_plan()
    answers["read_context"] = index.read_context()
    answers["read_context_raw"] = index.read_context_raw()
    answers["labels"] = index.labels()
    answers["path_ids"] = index.path_ids()
    answers["tree_rows"] = index.tree_rows()
    answers["message_ids"] = index.message_ids()
    answers["first_users"] = index.read_first_users(8)
    return answers


def opened(path: Path, **options: Any) -> native.SessionIndex | str:
    try:
        return native.scan_session(path, **options)
    except Exception as error:  # the same error either way (a newer version, say)
        return f"{type(error).__name__}: {error}"


@pytest.mark.parametrize("source", corpus(), ids=lambda path: path.name)
def test_a_tail_open_answers_what_the_whole_scan_answers(source: Path, tmp_path: Path) -> None:
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    whole = opened(path, tail=False)
    tail = opened(path)
    if isinstance(whole, str) or isinstance(tail, str):
        assert tail == whole
        return
    assert whole.source == "scanned"
    # The context first, before anything makes the tail open scan the whole file.
    assert (tail.leaf_id, tail.context_plan(), tail.read_context()) == (
        whole.leaf_id, whole.context_plan(), whole.read_context())
    assert facts(tail) == facts(whole)


def entry(entry_id: str, parent: str | None, kind: str = "message", **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": f"2026-01-01T00:{len(entry_id) % 60:02d}:00.000Z"}
    if kind == "message":
        body["message"] = {"role": fields.pop("role", "user"), "content": [{"type": "text", "text": fields.pop("text", entry_id)}]}
    body.update(fields)
    return body


def long_session(turns: int, *, compact_every: int = 0, pad: int = 2000) -> list[dict[str, Any]]:
    """A chain of turns with a model, a name and labels early on, compactions every
    `compact_every` turns (keeping the turn before), leaf moves and a duplicate id now and then."""
    lines: list[dict[str, Any]] = [entry("name", None, "session_info", name="early name"),
                                   entry("model", "name", "model_change", model="m-early"),
                                   entry("effort", "model", "effort_change", effort="high")]
    parent = "effort"
    for turn in range(turns):
        user, assistant = f"u{turn}", f"a{turn}"
        lines.append(entry(user, parent, text="x" * pad))
        lines.append(entry(assistant, user, role="assistant", text="y" * pad, model=f"m{turn % 3}"))
        parent = assistant
        if compact_every and turn % compact_every == compact_every - 1:
            lines.append(entry(f"c{turn}", parent, "compaction", summary="s", firstKeptEntryId=user,
                               tokensBefore=1, stripThinkingFromKept=turn % 2 == 0))
            parent = f"c{turn}"
        if turn % 50 == 7:
            lines.append(entry(f"l{turn}", parent, "label", targetId=user, label=f"mark {turn}"))
            parent = f"l{turn}"
        if turn % 97 == 3:  # a rewind's leaf move, then the same id again further on
            lines.append(entry(f"leaf{turn}", user, "custom", customType="commandcode.leaf", data={"reason": "rewind"}))
            parent = f"leaf{turn}"
            lines.append(entry(user, parent, text="again"))
            parent = user
    return lines


CRAFTED = {
    "compacted": lambda: long_session(600, compact_every=40),
    "compacted_torn_tail": lambda: long_session(600, compact_every=40),
    "uncompacted": lambda: long_session(400),
    "compaction_keeps_a_missing_entry": lambda: [*long_session(300, compact_every=100),
                                                 entry("cz", "a299", "compaction", summary="s",
                                                       firstKeptEntryId="nowhere", tokensBefore=1)],
    "name_after_the_compaction": lambda: [*long_session(300, compact_every=30),
                                          entry("late-name", "c299", "session_info", name="late")],
}


def write_crafted(path: Path, name: str) -> None:
    text = json.dumps(HEADER) + "\n" + "".join(json.dumps(line) + "\n" for line in CRAFTED[name]())
    if name.endswith("torn_tail"):
        text += '{"type":"message","id":"torn'
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_long_sessions_open_from_their_tail(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.jsonl"
    write_crafted(path, name)
    tail, whole = native.scan_session(path), native.scan_session(path, tail=False)
    assert tail.source == "tail"
    assert repr(tail).endswith(f'tail, leaf=Some("{tail.leaf_id}"))')
    files = SessionFiles.for_transcript(path)
    assert Session(files, tail).context().messages == Session(files, whole).context().messages
    assert facts(tail) == facts(whole)
    assert tail.source == "tail"  # still how it was opened, after the whole scan


def test_tree_and_stats_work_after_a_tail_open(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_crafted(path, "compacted")
    session = open_session(path, use_index=False)
    assert session.index_source == "tail"
    context = session.context()
    reference = Session(session.files, native.scan_session(path, tail=False))
    assert context.entry_ids == reference.context().entry_ids
    assert [row.id for row in session.tree_rows()] == [row.id for row in reference.tree_rows()]
    assert session.tree_layout([]) == reference.tree_layout([])
    assert (session.entry_count, session.message_count, session.name, session.labels(), session.anomalies) == (
        reference.entry_count, reference.message_count, reference.name, reference.labels(), reference.anomalies)
    assert session.path_ids() == reference.path_ids()
    assert session.has_entry("u5") and not session.has_entry("never")


def test_a_first_contact_with_the_index_leaves_a_mark_and_the_sidecar_comes_later(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_crafted(path, "compacted")
    sidecar = tmp_path / "index" / "s.idx"
    first = native.scan_session(path, sidecar)
    assert first.source == "tail" and first.context_plan()
    assert sidecar.read_bytes() == b""  # the mark of a first contact, no sidecar
    assert first.entry_count == native.scan_session(path, tail=False).entry_count
    assert sidecar.stat().st_size > 0  # the whole session was needed: its sidecar written
    again = native.scan_session(path, sidecar)
    assert again.source == "loaded"
    assert again.context_plan() == first.context_plan()
    # A context-only first contact, then the second contact: a whole scan that writes the sidecar.
    other = tmp_path / "other.jsonl"
    write_crafted(other, "name_after_the_compaction")
    other_sidecar = tmp_path / "index" / "other.idx"
    assert [native.scan_session(other, other_sidecar).source for _ in range(3)] == ["tail", "rebuilt", "loaded"]


def cli_context(path: Path, data: Path) -> Any:
    completed = subprocess.run([sys.executable, "-m", "commandcode", "sessions", "context", str(path), "--json"],
                               env=cli_env(data), capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


@pytest.mark.parametrize("name", ["compacted", "compacted_torn_tail", "name_after_the_compaction"])
def test_the_context_command_prints_what_the_whole_scan_gives(name: str, tmp_path: Path) -> None:
    from commandcode.sessions.tool_results import with_tool_results

    path = tmp_path / f"{name}.jsonl"
    write_crafted(path, name)
    context = Session(SessionFiles.for_transcript(path), native.scan_session(path, tail=False)).context()
    printed = cli_context(path, tmp_path / "data")
    assert printed == {"leaf": context.leaf_id, "entry_ids": context.entry_ids,
                       "messages": with_tool_results(context.messages)}


def test_a_caller_that_needs_the_whole_file_has_it_scanned_at_once_then_loaded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMANDCODE_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("COMMANDCODE_INDEX", "on")
    path = tmp_path / "proj" / "s.jsonl"
    path.parent.mkdir()
    write_crafted(path, "compacted")
    whole = native.scan_session(path, tail=False)
    first = open_session(path, tail=False)
    assert first.index_source == "rebuilt"  # no read of the end first, no first-contact mark: the sidecar
    again = open_session(path, tail=False)
    assert again.index_source == "loaded"  # the counts come from the sidecar, nothing scanned
    for session in (first, again):
        assert (session.entry_count, len(session.skipped_lines), session.leaf_id) == (
            whole.entry_count, len(whole.skipped), whole.leaf_id)
    monkeypatch.setenv("COMMANDCODE_INDEX", "off")
    assert open_session(path, tail=False).index_source == "scanned"
    assert open_session(path).index_source == "tail"  # the default stays the read of the end


def test_the_views_and_the_writer_that_need_the_whole_file_ask_for_it_up_front(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from commandcode.cli.sessions_show import context_view, show_view, tree_view
    from commandcode.sessions.writer import SessionWriter

    monkeypatch.setenv("COMMANDCODE_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("COMMANDCODE_INDEX", "off")
    path = tmp_path / "proj" / "s.jsonl"
    path.parent.mkdir()
    write_crafted(path, "compacted")
    asked: list[bool] = []
    scan = native.scan_session

    def recording(transcript: Any, sidecar: Any = None, tail: bool = True) -> native.SessionIndex:
        asked.append(tail)
        return scan(transcript, sidecar, tail)

    monkeypatch.setattr(native, "scan_session", recording)

    def tails(view: Any) -> list[bool]:
        asked.clear()
        view()
        return list(asked)

    assert tails(lambda: context_view(str(path), as_json=True, stats=True)) == [False]  # counts: the whole file
    assert json.loads(capsys.readouterr().out)["entries"] == scan(path, tail=False).entry_count
    assert tails(lambda: context_view(str(path), stats=True)) == [False]
    assert tails(lambda: context_view(str(path))) == [False]  # it warns of skipped lines
    assert tails(lambda: context_view(str(path), as_json=True)) == [True]  # the context alone: the end
    assert tails(lambda: show_view(str(path), as_json=True)) == [False]
    assert tails(lambda: tree_view(str(path), as_json=True)) == [False]

    def write() -> None:
        with SessionWriter(SessionFiles.for_transcript(path), str(tmp_path)) as writer:
            writer.append_entry("message", {"message": {"role": "user", "content": [{"type": "text", "text": "x"}]}})
            writer.commit()

    assert tails(write) == [False]  # every fresh id is checked against the whole file
