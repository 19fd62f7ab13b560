"""The SQLite catalog: the same rows as a folder scan, kept in step by size+mtime, only appended
bytes re-read for text, and never a failure: a damaged, truncated, locked catalog or a folder in
its place is a warning and a folder scan. Deleting it loses nothing; `doctor --reindex` rebuilds it."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from commandcode.catalog import cached, db, index
from commandcode.catalog.listing import list_sessions
from commandcode.catalog.search import search_sessions
from commandcode.config.paths import catalog_file, project_dir
from helpers.catalog_lock import catalog_locked
from helpers.cli import run_cli, run_json, snapshot
from helpers.session_files import append_turn, sid, write_session


def _rows(cwd: Path, **options: object) -> list[dict[str, object]]:
    errors: list[str] = []
    rows = [row.to_dict() for row in list_sessions(cwd, errors=errors, **options)]  # type: ignore[arg-type]
    assert errors == [], errors
    return rows


def _three(workdir: Path) -> list[Path]:
    return [
        write_session(workdir, sid(1), ["alpha prompt", "last words one"], meta={"gitBranch": "main"},
                      when="2026-01-01T00:00:00.000Z"),
        write_session(workdir, sid(2), ["bravo prompt"], meta={"entrypoint": "print"}, when="2026-01-02T00:00:00.000Z"),
        write_session(workdir, sid(3), ["charlie prompt"], meta={"title": "Named", "gitBranch": "feature"},
                      when="2026-01-03T00:00:00.000Z"),
    ]


def test_catalog_and_folder_scan_give_the_same_rows(home: Path, workdir: Path) -> None:
    _three(workdir)
    for options in ({}, {"include_headless": True}, {"branch": "main"}, {"limit": 1}, {"all_projects": True}):
        scanned = _rows(workdir, use_catalog=False, **options)
        assert _rows(workdir, use_catalog=True, **options) == scanned, options
        assert _rows(workdir, use_catalog=True, **options) == scanned, options  # warm: from the rows
    every = _rows(workdir, include_headless=True)
    assert [row["id"] for row in every] == [sid(3), sid(2), sid(1)]
    first = every[2]
    assert (first["first_message"], first["last_prompt"], first["message_count"]) == ("alpha prompt", "last words one", 4)
    assert first["size"] == (project_dir(workdir) / f"{sid(1)}.jsonl").stat().st_size
    assert [row["id"] for row in _rows(workdir)] == [sid(3), sid(1)]  # headless hidden
    assert [row["id"] for row in _rows(workdir, branch="feature")] == [sid(3)]
    assert Path(catalog_file()).is_file()


def test_a_changed_transcript_is_reread_and_its_text_from_the_appended_bytes_only(home: Path, workdir: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode import _native
    from commandcode.catalog import text_index

    monkeypatch.setattr(text_index, "start_background", lambda paths: True)  # no racing indexer here
    transcript = write_session(workdir, sid(1), ["first needle"])
    starts: list[int] = []
    original = _native.extract_texts
    monkeypatch.setattr(_native, "extract_texts",
                        lambda path, start, *rest: (starts.append(start), original(path, start, *rest))[1])
    assert _rows(workdir)[0]["message_count"] == 2
    assert starts == []  # a listing never reads text
    assert search_sessions("needle", workdir)[0].entry_id == "00000001"
    assert starts == [0]
    assert search_sessions("needle", workdir)[0].entry_id == "00000001"
    assert starts == [0]  # unchanged: not read again
    size = transcript.stat().st_size
    append_turn(transcript, 7, "second haystack")
    row = _rows(workdir)[0]
    assert (row["message_count"], row["last_prompt"]) == (4, "second haystack")
    hits = search_sessions("haystack", workdir)
    assert sorted((hit.session_id, hit.kind) for hit in hits) == [(sid(1), "assistant"), (sid(1), "user")]
    assert starts == [0, size]  # only the appended bytes
    assert search_sessions("needle", workdir)[0].entry_id == "00000001"

    transcript.write_text(transcript.read_text().replace("first needle", "first pinned"))  # rewritten, not appended
    starts.clear()
    assert _rows(workdir)[0]["first_message"] == "first pinned"
    assert search_sessions("needle", workdir) == []
    assert starts == [0]


@pytest.mark.parametrize("fts", [True, False])
def test_search_ranks_short_queries_deep_results_and_scopes(home: Path, workdir: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch, fts: bool) -> None:
    real_open = db.open_catalog
    monkeypatch.setattr(cached, "open_catalog", lambda: real_open(use_fts=fts))
    write_session(workdir, sid(1), ["please refactor the parser", "then the lexer"],
                  tool={"name": "read_file", "input": {"file_path": "src/zebra.py"}}, result="contents of QUOKKA",
                  when="2026-01-01T00:00:00.000Z")
    write_session(workdir, sid(2), ["parser parser parser"], when="2026-01-05T00:00:00.000Z")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_session(elsewhere, sid(3), ["a parser elsewhere"])

    hits = search_sessions("PARSER", workdir)
    assert {hit.session_id for hit in hits} == {sid(1), sid(2)}
    assert all(hit.snippet[start:end].lower() == "parser" for hit in hits for start, end in hit.spans)
    assert all(hit.spans for hit in hits)
    if fts:
        assert hits[0].score is not None
    newest = search_sessions("parser", workdir, newest=True)
    assert newest[0].session_id == sid(2)
    assert {hit.session_id for hit in search_sessions("parser", workdir, all_projects=True)} == {sid(1), sid(2), sid(3)}
    assert [hit.kind for hit in search_sessions("zebra", workdir)] == ["tool"]
    assert search_sessions("quokka", workdir) == []
    assert [hit.kind for hit in search_sessions("quokka", workdir, deep=True)] == ["result"]
    assert {hit.session_id for hit in search_sessions("le", workdir)} == {sid(1)}  # two characters: LIKE
    assert search_sessions("%", workdir) == []  # LIKE wildcards are literal
    assert [hit.snippet[slice(*hit.spans[0])] for hit in search_sessions("_", workdir)] == ["_"]  # read_file
    assert len(search_sessions("parser", workdir, limit=1)) == 1
    without = search_sessions("PARSER", workdir, use_catalog=False)
    assert {(hit.session_id, hit.entry_id) for hit in without} == {(hit.session_id, hit.entry_id) for hit in hits}


def test_search_on_the_command_line(home: Path, workdir: Path) -> None:
    write_session(workdir, sid(1), ["find the needle here"])
    hits = run_json(["sessions", "search", "needle", "--json"], workdir, home)
    assert [(hit["session_id"], hit["entry_id"], hit["kind"]) for hit in hits][0] == (sid(1), "00000001", "user")
    text = run_cli(["sessions", "search", "needle"], workdir, home)
    assert text.returncode == 0 and "find the needle here" in text.stdout
    empty = run_cli(["sessions", "search", "  "], workdir, home)
    assert empty.returncode == 2 and empty.stderr.startswith("error: empty search query")
    none = run_cli(["sessions", "search", "absent"], workdir, home)
    assert none.returncode == 0 and "No matches" in none.stdout


def _damage_cases() -> list[str]:
    return ["garbage", "truncated", "directory", "locked"]


@pytest.mark.parametrize("damage", _damage_cases())
def test_a_bad_catalog_is_a_warning_and_a_folder_scan(home: Path, workdir: Path, damage: str) -> None:
    _three(workdir)
    good = run_json(["sessions", "list", "--all", "--json"], workdir, home)
    path = Path(catalog_file())
    if damage == "garbage":
        path.write_bytes(b"this is not a database at all" * 100)
    elif damage == "truncated":
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size // 2 or 100)
        for suffix in ("-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    elif damage == "directory":
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        path.mkdir()
        (path / "keep").write_text("mine")
    else:
        os.utime(project_dir(workdir) / f"{sid(1)}.jsonl", ns=(1, 1))  # a change the listing must write
    sessions_before = snapshot(project_dir(workdir))
    with catalog_locked(path) if damage == "locked" else contextlib.nullcontext():
        completed = run_cli(["sessions", "list", "--all", "--json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    rows = json.loads(completed.stdout)
    assert [row["id"] for row in rows] == [row["id"] for row in good]
    lines = completed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: the session catalog cannot be used"), lines
    assert "scanning the project folders" in lines[0]
    assert snapshot(project_dir(workdir)) == sessions_before  # no session file touched
    if damage == "directory":
        assert (path / "keep").read_text() == "mine"
        refused = run_cli(["doctor", "--reindex"], workdir, home)
        assert refused.returncode == 1 and "is a directory" in refused.stderr.splitlines()[0]
        assert (path / "keep").read_text() == "mine"
    elif damage != "locked":
        rebuilt = run_cli(["doctor", "--reindex"], workdir, home)
        assert rebuilt.returncode == 0 and "rebuilt" in rebuilt.stdout and "sessions/s" in rebuilt.stdout, rebuilt
        again = run_cli(["sessions", "list", "--all", "--json"], workdir, home)
        assert again.stderr == "" and json.loads(again.stdout) == good


def test_deleting_the_catalog_loses_nothing(home: Path, workdir: Path) -> None:
    _three(workdir)
    before = run_json(["sessions", "list", "--all", "--json"], workdir, home)
    for suffix in ("", "-wal", "-shm"):
        Path(catalog_file() + suffix).unlink(missing_ok=True)
    assert run_json(["sessions", "list", "--all", "--json"], workdir, home) == before
    assert run_json(["sessions", "list", "--all", "--json"], workdir, home,) == \
        json.loads(run_cli(["sessions", "list", "--all", "--json"], workdir, home, COMMANDCODE_CATALOG="off").stdout)


def test_an_older_schema_is_rebuilt(home: Path, workdir: Path) -> None:
    _three(workdir)
    _rows(workdir)
    connection = sqlite3.connect(catalog_file())
    connection.execute("PRAGMA user_version = 999")
    connection.execute("UPDATE sessions SET name = 'stale'")
    connection.commit()
    connection.close()
    assert "stale" not in {row["name"] for row in _rows(workdir)}


def test_a_warm_listing_imports_little(home: Path, workdir: Path) -> None:
    """`sessions list --limit 20 --json` with a warm catalog loads no typer, rich, typing,
    pathlib, json, dataclasses or thread pool: each costs more than the listing itself."""
    import sys

    from helpers.cli import cli_env

    for number in range(30):
        write_session(workdir, sid(number), [f"prompt {number}"])
    run_json(["sessions", "list", "--json"], workdir, home)  # builds the catalog
    probe = ("import sys; from commandcode.cli import run; code = run(sys.argv[1:]); "
             "sys.stdout.flush(); sys.stderr.write(' '.join(sorted(sys.modules))); sys.exit(code)")
    completed = subprocess.run([sys.executable, "-c", probe, "sessions", "list", "--limit", "20", "--json"],
                               cwd=workdir, env=cli_env(home), capture_output=True, text=True, check=True)
    assert len(json.loads(completed.stdout)) == 20
    loaded = set(completed.stderr.split())
    assert loaded & {"typer", "click", "rich", "typing", "pathlib", "json", "dataclasses", "concurrent.futures",
                     "hashlib", "textual"} == set()


def test_search_takes_the_fast_path_and_prints_what_typer_prints(home: Path, workdir: Path) -> None:
    write_session(workdir, sid(1), ["the needle is here"])
    for args in (["sessions", "search", "needle"], ["sessions", "search", "needle", "--json", "--deep"],
                 ["sessions", "search", "ne", "--limit", "1", "--newest"], ["sessions", "list", "--limit", "1"],
                 ["sessions", "list", "--branch", "nope", "--json"]):
        fast = run_cli(args, workdir, home)
        slow = run_cli(args, workdir, home, COMMANDCODE_FAST_PATH="off")
        assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr), args
        assert fast.returncode == 0 and fast.stdout, args
    bad = run_cli(["sessions", "list", "--limit", "0"], workdir, home)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and "Traceback" not in bad.stderr


def test_a_build_reports_progress_as_it_reads(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.catalog import text_index

    monkeypatch.setattr(text_index, "STEP_BYTES", 4096)  # several steps within one transcript
    for number in range(3):
        write_session(workdir, sid(number), [f"prompt {number} " + "z" * 20_000, "more " * 2000])
    steps: list[tuple[int, int]] = []
    paths = sorted(str(path) for path in project_dir(workdir).glob("*.jsonl"))
    with db.open_catalog() as catalog:
        text_index.prepare(catalog.connection)
        files = text_index.states(catalog.connection, paths)
        read = text_index.build(catalog.connection, files, progress=lambda done, total: steps.append((done, total)))
    total = sum(path.stat().st_size for path in project_dir(workdir).glob("*.jsonl"))
    assert read == total
    assert len(steps) > 6 and all(step[1] == total for step in steps)
    assert [done for done, _ in steps] == sorted(done for done, _ in steps) and steps[-1][0] == total
