"""The search's text index (catalog/text_index.py): built by `sessions search` or the background
indexer, never by a listing; a search while it is behind says so and still finds everything; a
transcript changed behind its back gives no wrong snippet; a catalog that cannot be used is one
warning line and a native scan; short non-ASCII queries and words deep in long prompts are found."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from commandcode.catalog import text_index
from commandcode.catalog.search import search_sessions
from commandcode.config.paths import catalog_file, project_dir
from helpers.catalog_lock import catalog_locked
from helpers.cli import cli_env, run_cli, run_json, snapshot, wait_for
from helpers.session_files import append_turn, sid, write_session


def test_short_non_ascii_queries_and_words_deep_in_a_long_prompt_are_found(home: Path, workdir: Path) -> None:
    long_prompt = "filler words " * 4000 + "zanzibar at the end"  # past the first 32 KiB
    write_session(workdir, sid(1), ["Nous allons à l'ÉCOLE demain", long_prompt])
    for query, expected in (("éc", "ÉC"), ("ÉC", "ÉC"), ("zanzibar", "zanzibar"), ("école", "ÉCOLE")):
        hits = [hit for hit in run_json(["sessions", "search", query, "--json"], workdir, home) if hit["kind"] == "user"]
        assert [hit["session_id"] for hit in hits] == [sid(1)], query
        start, end = hits[0]["spans"][0]
        assert hits[0]["snippet"][start:end] == expected, query


def test_trigrams_out_of_order_are_no_hit_and_hits_rank_by_bm25(home: Path, workdir: Path) -> None:
    """The index matches all of a query's trigrams in any order: only texts that hold the query
    are hits, and they rank as bm25 would (more occurrences, then shorter texts, first)."""
    write_session(workdir, sid(1), ["def and __init__ kept apart, every trigram of the query but not it"],
                  when="2026-01-01T00:00:00.000Z")
    write_session(workdir, sid(2), ["here is def __init__ once, in a longer text " + "with padding words " * 20],
                  when="2026-01-02T00:00:00.000Z")
    write_session(workdir, sid(3), ["def __init__ then def __init__"], when="2026-01-03T00:00:00.000Z")
    write_session(workdir, sid(4), ["def __init__ short"], when="2026-01-04T00:00:00.000Z")
    hits = [hit for hit in search_sessions("def __init__", workdir) if hit.kind == "user"]
    assert [hit.session_id for hit in hits] == [sid(3), sid(4), sid(2)]
    assert all(hit.score is not None and hit.score < 0 for hit in hits)
    newest = [hit for hit in search_sessions("def __init__", workdir, newest=True) if hit.kind == "user"]
    assert [hit.session_id for hit in newest] == [sid(4), sid(3), sid(2)]
    catalog = sqlite3.connect(catalog_file())
    assert "detail=none" in catalog.execute("SELECT sql FROM sqlite_master WHERE name = 'text_fts'").fetchone()[0]
    catalog.close()


def test_a_search_behind_the_index_says_so_and_still_finds_the_rest(home: Path, workdir: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []
    monkeypatch.setattr(text_index, "start_background", lambda paths: started.append(paths) or True)
    transcript = write_session(workdir, sid(1), ["the old needle"])
    assert [hit.entry_id for hit in search_sessions("needle", workdir) if hit.kind == "user"] == ["00000001"]
    assert started == [[str(transcript)]]  # the tool results are left to the background indexer
    started.clear()
    append_turn(transcript, 7, "a fresh needle")
    errors: list[str] = []
    hits = search_sessions("needle", workdir, errors=errors, build_seconds=-1)  # nothing indexed now
    assert sorted(hit.snippet for hit in hits if hit.kind == "user") == ["a fresh needle", "the old needle"]
    assert len(errors) == 1 and errors[0].startswith("the search index covers ") and "searched directly" in errors[0]
    assert started == [[str(transcript)]]
    # the background indexer, a real process, finishes it; then the index answers alone
    subprocess.run([sys.executable, "-m", "commandcode.catalog.text_index", str(transcript)], env=cli_env(home),
                   check=True, timeout=60)
    errors.clear()
    assert len(search_sessions("needle", workdir, errors=errors, build_seconds=-1)) == 4  # prompts and replies
    assert errors == [] and len(started) == 1
    assert len(search_sessions("needle", workdir, errors=errors, build_seconds=-1, deep=True)) == 4
    assert errors == [] and len(started) == 1  # the background run indexed the tool results too


def test_a_transcript_changed_behind_the_index_gives_no_wrong_snippet(home: Path, workdir: Path) -> None:
    transcript = write_session(workdir, sid(1), ["alpha needle one", "bravo needle two", "charlie needle three"])
    assert len([hit for hit in search_sessions("needle", workdir) if hit.kind == "user"]) == 3
    status = transcript.stat()
    data = transcript.read_bytes()
    transcript.write_bytes(data.replace(b"bravo needle", b"bravo noodle"))  # same size, same inode
    os.utime(transcript, ns=(status.st_atime_ns, status.st_mtime_ns))  # and the same mtime
    hits = search_sessions("needle", workdir)
    assert sorted(hit.snippet for hit in hits if hit.kind == "user") == ["alpha needle one", "charlie needle three"]
    assert all("noodle" not in hit.snippet for hit in hits)
    with transcript.open("r+b") as handle:  # truncated: only the first turn is left
        handle.truncate(data.index(b"bravo"))
    completed = run_cli(["sessions", "search", "needle", "--json"], workdir, home)
    assert completed.returncode == 0 and "Traceback" not in completed.stderr, completed.stderr
    hits = run_json(["sessions", "search", "needle", "--json"], workdir, home)
    assert [hit["snippet"] for hit in hits if hit["kind"] == "user"] == ["alpha needle one"]


def _no_background_indexer(folder: str) -> None:
    """Waits until no background indexer of `folder`'s transcripts runs (a search starts one
    whenever work is left, e.g. the tool-results pass)."""
    def running() -> bool:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as source:
                    command = source.read().decode("utf-8", "replace")
            except OSError:
                continue
            if "commandcode.catalog.text_index" in command and folder in command:
                return True
        return False

    wait_for(lambda: not running(), what="the background indexer to finish")


@pytest.mark.parametrize("damage", ["directory", "fifo", "locked"])
def test_a_catalog_that_cannot_be_used_still_answers_by_native_scan(home: Path, workdir: Path, damage: str) -> None:
    write_session(workdir, sid(1), ["find the needle here"])
    write_session(workdir, sid(2), ["nothing to see"])
    good = run_json(["sessions", "search", "needle", "--json"], workdir, home)
    _no_background_indexer(str(project_dir(workdir)))  # it would make the catalog again under the damage
    path = Path(catalog_file())
    if damage in ("directory", "fifo"):
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        path.mkdir() if damage == "directory" else os.mkfifo(path)
    else:
        append_turn(project_dir(workdir) / f"{sid(2)}.jsonl", 5, "another needle")  # a change to index
    before = snapshot(project_dir(workdir))
    with catalog_locked(path) if damage == "locked" else contextlib.nullcontext():
        completed = run_cli(["sessions", "search", "needle", "--json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    lines = completed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: the session catalog cannot be used"), lines
    hits = {(hit["session_id"], hit["snippet"]) for hit in json.loads(completed.stdout)}
    assert {(hit["session_id"], hit["snippet"]) for hit in good} <= hits
    if damage == "locked":
        assert (sid(2), "another needle") in hits
    assert snapshot(project_dir(workdir)) == before


def test_a_listing_never_builds_the_text_index(home: Path, workdir: Path) -> None:
    write_session(workdir, sid(1), ["find the needle here"])
    run_json(["sessions", "list", "--all", "--json"], workdir, home)
    import sqlite3

    connection = sqlite3.connect(catalog_file())
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    finally:
        connection.close()
    assert "text_rows" not in tables
    assert run_json(["sessions", "search", "needle", "--json"], workdir, home)[0]["session_id"] == sid(1)


def test_a_deleted_transcript_is_forgotten_and_garbage_is_counted(home: Path, workdir: Path) -> None:
    import sqlite3

    kept = write_session(workdir, sid(1), ["keep this needle"])
    gone = write_session(workdir, sid(2), ["lose this needle"])
    assert {hit.session_id for hit in search_sessions("needle", workdir)} == {sid(1), sid(2)}
    gone.unlink()
    assert {hit.session_id for hit in search_sessions("needle", workdir)} == {sid(1)}
    connection = sqlite3.connect(catalog_file())
    try:
        assert [row[0] for row in connection.execute("SELECT path FROM text_files")] == [str(kept)]
        assert connection.execute("SELECT value FROM text_index_meta WHERE key = 'garbage'").fetchone()[0] == 2
    finally:
        connection.close()
