"""Sub-agent runs through real `commandcode` processes (issue #28): the listings and the picker's
source never take a run for a session (with and without the catalog), `sessions fork`
carries the runs into the fork and `sessions clone` those of the path it keeps; a sweep deletes or archives them with their session, and so does the picker's delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commandcode.agent.manage import delete_session
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.subagent_runs import list_subagent_runs
from helpers.cli import run_json, run_ok
from helpers.subagents import write_run
from helpers.trees import branched_session
from helpers.workspace import age_session, make_session


@pytest.mark.parametrize("catalog", ["on", "off"])
def test_runs_are_never_listed_as_sessions(home: Path, workdir: Path, catalog: str) -> None:
    files, _ = branched_session(workdir)
    for call in ("t2", "t4", "t4"):
        write_run(files, str(workdir), tool_use_id=call)
    env = {} if catalog == "on" else {"COMMANDCODE_CATALOG": "off"}
    for scope in ([], ["--all"]):
        listed = json.loads(run_ok(["sessions", "list", "--json", *scope], workdir, home, **env).stdout)
        rows = listed["sessions"] if isinstance(listed, dict) else listed
        assert [row["id"] for row in rows] == [files.session_id], rows
    found = run_ok(["sessions", "search", "do it", "--json"], workdir, home, **env).stdout
    assert "agent-" not in found


def test_sessions_fork_carries_the_runs(home: Path, workdir: Path) -> None:
    files, _ = branched_session(workdir)
    run = write_run(files, str(workdir), tool_use_id="t4", reply="sub-agent reply")
    printed = json.loads(run_ok(["sessions", "fork", files.session_id, "--json"], workdir, home).stdout)
    fork = SessionFiles.for_transcript(printed["path"])
    runs = list_subagent_runs(fork, with_messages=True).runs
    assert [(r.agent_id, r.tool_use_id, r.status) for r in runs] == [(run.agent_id, "t4", "completed")]
    assert runs[0].messages[-1]["content"][0]["text"] == "sub-agent reply"


def test_sessions_clone_carries_the_runs_of_the_path_it_keeps(home: Path, workdir: Path) -> None:
    files, _ = branched_session(workdir)
    write_run(files, str(workdir), tool_use_id="t2", reply="on the abandoned branch")
    kept = write_run(files, str(workdir), tool_use_id="t4", reply="on the kept path")
    printed = json.loads(run_ok(["sessions", "clone", files.session_id, "--json"], workdir, home).stdout)
    clone = SessionFiles.for_transcript(printed["path"])
    runs = list_subagent_runs(clone, with_messages=True).runs
    assert [(r.agent_id, r.tool_use_id) for r in runs] == [(kept.agent_id, "t4")]
    assert runs[0].messages[-1]["content"][0]["text"] == "on the kept path"
    assert len(list_subagent_runs(files).runs) == 2  # the source keeps both


def test_a_sweep_takes_the_runs_with_the_session_and_an_archive_brings_them_back(home: Path, workdir: Path) -> None:
    doomed, kept = make_session(home, workdir), make_session(home, workdir)
    for transcript in (doomed, kept):
        write_run(SessionFiles.for_transcript(transcript), str(workdir), tool_use_id="call_1")
    age_session(doomed, 40)
    runs = doomed.with_suffix("")
    before = {path: path.read_bytes() for path in runs.rglob("*") if path.is_file()}
    assert len(before) == 2
    report = run_json(["sweep", "--json", "--archive"], workdir, home)
    assert [row["id"] for row in report["sessions"]] == [doomed.stem]
    assert not doomed.exists() and not runs.exists()  # the emptied run folders are gone too
    assert len(list_subagent_runs(SessionFiles.for_transcript(kept)).runs) == 1
    run_json(["sweep", "--restore", doomed.stem[:8], "--json"], workdir, home)
    assert {path: path.read_bytes() for path in runs.rglob("*") if path.is_file()} == before
    assert [r.status for r in list_subagent_runs(SessionFiles.for_transcript(doomed)).runs] == ["completed"]


def test_the_pickers_delete_takes_the_runs(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doomed, kept = make_session(home, workdir), make_session(home, workdir)
    for transcript in (doomed, kept):
        write_run(SessionFiles.for_transcript(transcript), str(workdir), tool_use_id="call_1")
    monkeypatch.setenv("PATH", "/nonexistent")  # no `trash` command: removed for good
    removed, trashed = delete_session(SessionFiles.for_transcript(doomed))
    assert not trashed and str(doomed.with_suffix("")) in removed
    assert not doomed.exists() and not doomed.with_suffix("").exists()
    assert len(list_subagent_runs(SessionFiles.for_transcript(kept)).runs) == 1
