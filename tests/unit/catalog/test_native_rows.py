"""The native listing rows (`native_summary.summarize_paths`, one Rust pass over many files) are the
rows the Python reader makes (`summary.summarize(open_session(...))`), field for field, for every
kind of transcript: named in the file or by meta, headless, forked, with torn lines, a broken meta,
no header, prompts only tool results, text Rust's JSON parser refuses, a huge one through its
index sidecar; and a listing never reads searchable text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from commandcode.catalog import native_summary
from commandcode.catalog.listing import list_sessions
from commandcode.config.paths import project_dir
from helpers.session_files import sid, write_session

SESSION_INFO = '{"type":"session_info","id":"info0001","parentId":"00000002","timestamp":"2026-01-02T03:04:09.000Z","name":"%s"}\n'


def _kinds(workdir: Path) -> list[Path]:
    folder = project_dir(workdir)
    made = [
        write_session(workdir, sid(1), ["plain prompt", "second"]),
        write_session(workdir, sid(2), ["meta named"], meta={"title": " Meta Title ", "gitBranch": "main",
                                                              "entrypoint": "print", "parentSessionId": sid(1),
                                                              "userRenamed": True, "name": "alias"}),
        write_session(workdir, sid(3), ["torn"]),
        write_session(workdir, sid(4), ["broken meta"]),
        write_session(workdir, sid(6), ["surrogate \udc80 prompt".encode("utf-8", "surrogatepass").decode("utf-8", "replace")]),
    ]
    with made[0].open("a") as handle:
        handle.write(SESSION_INFO % "in the file")
    with made[2].open("ab") as handle:
        handle.write(b'{"type":"message","id":"torn", "mess\n')
    (folder / f"{sid(4)}.meta.json").write_text('{"title": "half')
    headerless = folder / f"{sid(5)}.jsonl"
    headerless.write_text(made[0].read_text().split("\n", 1)[1])
    lone = folder / f"{sid(7)}.jsonl"  # a lone surrogate escape: serde_json refuses it, Python reads it
    lone.write_text(made[1].read_text().replace("meta named", "lone \\udc80 here"))
    only_tools = write_session(workdir, sid(8), ["x"], tool={"name": "bash", "input": {"command": "ls"}}, result="ok")
    only_tools.write_text(only_tools.read_text().replace('"text":"x"', '"text":"   "').replace('"text": "x"', '"text": "   "'))
    return [*made, headerless, lone, only_tools]


def test_native_rows_are_the_readers_rows(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [str(path) for path in _kinds(workdir)]
    native = native_summary.summarize_paths(paths)
    python = [native_summary.python_row(path) for path in paths]
    for (row, fingerprint), expected in zip(native, python):
        assert row == expected, row.path
        assert len(fingerprint) == 32
    by_id = {row.id: row for row, _ in native}
    assert by_id[sid(1)].name == "in the file" and by_id[sid(1)].last_prompt == "second"
    assert by_id[sid(2)].name == "Meta Title" and by_id[sid(2)].aliases == ("Meta Title", "alias")
    assert by_id[sid(3)].damaged == "1 unreadable line(s) skipped"
    assert by_id[sid(4)].damaged is not None and "meta file is not a JSON object" in by_id[sid(4)].damaged
    assert by_id[sid(5)].cwd_recorded is False and by_id[sid(5)].cwd == os.getcwd()
    assert by_id[sid(7)].first_message == "lone \udc80 here"  # through the Python reader
    assert by_id[sid(8)].first_message is None and by_id[sid(8)].last_prompt is None


def test_a_big_transcript_is_summarized_through_its_sidecar(home: Path, workdir: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMANDCODE_INDEX", "on")
    transcript = write_session(workdir, sid(1), [f"prompt {turn} " + "y" * 70_000 for turn in range(16)])
    assert transcript.stat().st_size >= native_summary.SIDECAR_FROM_BYTES
    path = str(transcript)
    first = native_summary.summarize_paths([path])[0][0]
    assert first == native_summary.python_row(path)
    from commandcode._native import listing_rows_of

    sidecar = native_summary._sidecar(path, transcript.stat().st_size)
    assert sidecar is not None and os.path.isfile(sidecar)
    assert listing_rows_of([(path, sidecar)])[0]["source"] == "loaded"  # nothing of the transcript parsed again


def test_a_listing_reads_no_text(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode import _native

    def refuse(*args: object) -> None:
        raise AssertionError("a listing read searchable text")

    monkeypatch.setattr(_native, "extract_texts", refuse)
    _kinds(workdir)
    for use_catalog in (True, False):
        errors: list[str] = []
        rows = list_sessions(workdir, include_headless=True, use_catalog=use_catalog, errors=errors)
        assert len(rows) == 8, (use_catalog, [row.id for row in rows])
    assert json.loads(json.dumps([row.to_dict() for row in rows]))


@pytest.mark.parametrize("batch", [2000, 3])
def test_catalog_rows_are_the_scanned_rows(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                           batch: int) -> None:
    """What a refresh writes (the columns in order, from the stats and meta sidecars the freshness
    check saw) reads back as the rows a folder scan makes, for every kind of transcript, also when
    the refresh writes them in several batches."""
    from commandcode.catalog import index

    monkeypatch.setattr(index, "BATCH", batch)
    _kinds(workdir)
    scanned = list_sessions(workdir, include_headless=True, use_catalog=False)
    cold = list_sessions(workdir, include_headless=True, use_catalog=True)
    warm = list_sessions(workdir, include_headless=True, use_catalog=True)
    assert [row.to_dict() for row in cold] == [row.to_dict() for row in scanned]
    assert [row.to_dict() for row in warm] == [row.to_dict() for row in scanned]


@pytest.mark.parametrize("use_catalog", [True, False])
def test_the_newest_resumable_session_is_picked_past_unreadable_and_other_kinds(
        home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch, use_catalog: bool) -> None:
    """`-c` reads the rows newest first only down to the one it picks (`counted`): the unreadable
    and headless sessions newer than it are passed over (and reported), older ones are not read."""
    from commandcode.catalog import listing

    monkeypatch.setenv("COMMANDCODE_CATALOG", "on" if use_catalog else "off")
    write_session(workdir, sid(1), ["older interactive"], when="2026-01-01T00:00:00.000Z")
    write_session(workdir, sid(2), ["newest interactive"], when="2026-01-02T00:00:00.000Z")
    write_session(workdir, sid(3), ["headless"], meta={"entrypoint": "print"}, when="2026-01-03T00:00:00.000Z")
    broken = project_dir(workdir) / f"{sid(4)}.jsonl"
    broken.write_text('{"type":"session","version":99,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
                      % sid(4))  # a format from the future: it cannot be opened
    os.utime(broken, (4_000_000_000, 4_000_000_000))  # the newest of all
    unreadable: list[tuple[Path, str]] = []
    picked = listing.most_recent(workdir, headless=False, unreadable=unreadable)
    assert picked is not None and picked.session_id == sid(2)
    assert [path.name for path, _ in unreadable] == [broken.name]
    unreadable.clear()
    picked = listing.most_recent(workdir, headless=True, unreadable=unreadable)  # read as "only" headless rows
    assert picked is not None and picked.session_id == sid(3)
    assert [path.name for path, _ in unreadable] == [broken.name]
    rows = listing.list_sessions(workdir, include_headless=True, limit=1,
                                 counted=lambda row: row.entrypoint != "print" and bool(row.cwd))
    assert [row.id for row in rows][-1] == sid(2) and sid(1) not in [row.id for row in rows]
