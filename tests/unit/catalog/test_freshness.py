"""The warm freshness check (`catalog/freshness.py` over the Rust core's `folder_changes`): an
unchanged folder reads no row, and still no listing ever shows a stale row: a transcript appended
since (even one far below the rows shown), a renamed session (meta rewritten), a new one, a
deleted one, and rows another program dropped are all seen by the next listing."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from commandcode._native import folder_changes
from commandcode.catalog import freshness
from commandcode.catalog.db import open_catalog
from commandcode.catalog.listing import list_sessions
from commandcode.config.paths import catalog_file, project_dir
from helpers.cli import run_json
from helpers.session_files import append_turn, sid, write_session


def _day(number: int) -> str:
    return f"2026-01-{number:02d}T00:00:00.000Z"


def _many(workdir: Path, count: int) -> list[Path]:
    return [write_session(workdir, sid(number), [f"prompt {number}"], when=_day(number)) for number in range(1, count + 1)]


def _listed(workdir: Path, home: Path, limit: int = 3) -> list[dict[str, object]]:
    rows = run_json(["sessions", "list", "--limit", str(limit), "--json"], workdir, home)
    assert isinstance(rows, list)
    return rows


def test_an_unchanged_folder_reads_no_row(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _many(workdir, 5)
    assert len(list_sessions(workdir)) == 5  # builds the rows and the folder's snapshot
    full: list[str] = []
    original = freshness._full_pass
    monkeypatch.setattr(freshness, "_full_pass", lambda connection, folder, *rest: (full.append(folder),
                                                                                    original(connection, folder, *rest))[1])
    with open_catalog() as catalog:
        state = freshness.changed_files(catalog.connection, str(project_dir(workdir)), [])
    assert state is not None and (state.transcripts, state.known, state.gone) == ({}, {}, [])
    assert full == []
    assert [row.id for row in list_sessions(workdir)] == [sid(number) for number in (5, 4, 3, 2, 1)]
    assert full == []


def test_every_change_since_the_last_listing_is_seen(home: Path, workdir: Path) -> None:
    transcripts = _many(workdir, 6)
    folder = project_dir(workdir)
    assert [row["id"] for row in _listed(workdir, home)] == [sid(6), sid(5), sid(4)]

    append_turn(transcripts[0], 9, "the oldest one again", when=_day(20))  # far below the rows shown
    rows = _listed(workdir, home)
    assert (rows[0]["id"], rows[0]["message_count"], rows[0]["last_prompt"]) == (sid(1), 4, "the oldest one again")

    (folder / f"{sid(5)}.meta.json").write_text(json.dumps({"title": "Renamed"}))
    assert [row["name"] for row in _listed(workdir, home) if row["id"] == sid(5)] == ["Renamed"]

    write_session(workdir, sid(7), ["brand new"], when=_day(25))
    transcripts[0].unlink()
    rows = _listed(workdir, home, limit=10)
    assert [row["id"] for row in rows] == [sid(7), sid(6), sid(5), sid(4), sid(3), sid(2)]
    os.unlink(folder / f"{sid(5)}.meta.json")
    assert [row["name"] for row in _listed(workdir, home) if row["id"] == sid(5)] == [None]


def test_rows_dropped_behind_its_back_are_rebuilt(home: Path, workdir: Path) -> None:
    """The snapshot is trusted only with the row count it was taken with."""
    _many(workdir, 4)
    assert len(_listed(workdir, home, limit=10)) == 4
    connection = sqlite3.connect(catalog_file())
    connection.execute("DELETE FROM sessions WHERE id = ?", (sid(2),))
    connection.commit()
    connection.close()
    assert [row["id"] for row in _listed(workdir, home, limit=10)] == [sid(4), sid(3), sid(2), sid(1)]


def test_folder_changes_names_every_kind_of_change(tmp_path: Path) -> None:
    odd = os.fsdecode(b"caf\xe9.jsonl")  # not UTF-8: reported as os.listdir names it
    (tmp_path / "a.jsonl").write_text("{}\n")
    (tmp_path / odd).write_text("{}\n")
    (tmp_path / "a.meta.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("ignored")
    (tmp_path / "target.jsonl.txt").write_text("{}\n")
    os.symlink(tmp_path / "target.jsonl.txt", tmp_path / "link.jsonl")
    changed, gone, first = folder_changes(tmp_path, b"")
    assert sorted(changed) == sorted(["a.jsonl", odd, "a.meta.json", "link.jsonl"]) and gone == []
    assert folder_changes(tmp_path, first)[:2] == ([], [])
    with (tmp_path / "target.jsonl.txt").open("a") as handle:  # through the symlink: followed
        handle.write("{}\n")
    (tmp_path / odd).unlink()
    changed, gone, _ = folder_changes(tmp_path, first)
    assert (changed, gone) == (["link.jsonl"], [odd])
    with pytest.raises(OSError):
        folder_changes(tmp_path / "missing", b"")
