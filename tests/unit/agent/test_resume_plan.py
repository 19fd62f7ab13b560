"""Resolving and resuming (`agent/resume.py`): -r by id then name (two of a name is an error that
lists both), -c (interactive, or headless with -p), --session PATH|PREFIX, what a resume restores
(meta's model unless --model, effort, goal, the permission mode only from -c/-r and never plan or
bypass), the relink of a session whose directory is gone, the summary question, and a session
another process is writing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from commandcode.agent.resume import plan_resume
from commandcode.agent.runtime import AgentSession
from commandcode.config.paths import project_dir
from commandcode.errors import AmbiguousSessionError, SessionLockedError, SessionNotFoundError, UsageError
from commandcode.sessions.files import SessionFiles
from helpers.cli import hold_writer, run_json, snapshot, stop
from helpers.session_files import sid, write_session


def _plan(cwd: Path, **how: object):  # type: ignore[no-untyped-def]
    return plan_resume(cwd, **how)


def test_r_takes_an_exact_id_then_a_name_and_refuses_two_of_a_name(home: Path, workdir: Path, tmp_path: Path) -> None:
    write_session(workdir, sid(1), ["one"], meta={"title": "Auth Work"})
    write_session(workdir, sid(2), ["two"], meta={"title": "other"})
    assert _plan(workdir, reference=sid(2)).files.session_id == sid(2)
    assert _plan(workdir, reference="  auth work ").files.session_id == sid(1)
    write_session(workdir, sid(3), ["three"], meta={"name": "AUTH WORK"})
    with pytest.raises(AmbiguousSessionError) as refused:
        _plan(workdir, reference="auth work")
    assert sid(1) in str(refused.value) and sid(3) in str(refused.value)
    with pytest.raises(SessionNotFoundError):
        _plan(workdir, reference="nothing like it")
    with pytest.raises(UsageError):
        _plan(workdir, reference=sid(1), continue_last=True)


def test_c_is_the_newest_interactive_session_or_with_p_the_newest_headless(home: Path, workdir: Path) -> None:
    write_session(workdir, sid(1), ["old"], when="2026-01-01T00:00:00.000Z")
    write_session(workdir, sid(2), ["headless"], meta={"entrypoint": "print"}, when="2026-01-03T00:00:00.000Z")
    write_session(workdir, sid(3), ["interactive"], when="2026-01-02T00:00:00.000Z")
    assert _plan(workdir, continue_last=True).files.session_id == sid(3)
    assert _plan(workdir, continue_last=True, print_mode=True).files.session_id == sid(2)


def test_session_option_takes_a_path_outside_the_project_or_a_unique_prefix(home: Path, workdir: Path,
                                                                            tmp_path: Path) -> None:
    outside = tmp_path / "loose"
    outside.mkdir()
    loose = outside / "0badc0de-0000-4000-8000-000000000000.jsonl"
    loose.write_text(json.dumps({"type": "session", "version": 3, "id": "x", "timestamp": "2026-01-01T00:00:00.000Z",
                                 "cwd": str(workdir)}) + "\n")
    plan = _plan(workdir, session_option=str(loose))
    assert plan.files.folder == str(outside) and plan.files.session_id == loose.name[:-6]
    other = tmp_path / "elsewhere"
    other.mkdir()
    write_session(other, "abcd1111-0000-4000-8000-000000000001", ["a"])
    write_session(workdir, "abcd2222-0000-4000-8000-000000000002", ["b"])
    assert _plan(workdir, session_option="abcd1").files.session_id.startswith("abcd1111")
    with pytest.raises(AmbiguousSessionError) as refused:
        _plan(workdir, session_option="abcd")
    assert "abcd1111" in str(refused.value) and "abcd2222" in str(refused.value)
    with pytest.raises(SessionNotFoundError):
        _plan(workdir, session_option="ffff")

    with plan.open() as agent:  # appended where it is
        agent.turns.run_turn("hello loose")
    assert "hello loose" in loose.read_text()
    assert not (project_dir(workdir) / loose.name).exists()


def test_a_resume_restores_model_effort_goal_and_only_safe_modes(home: Path, workdir: Path) -> None:
    goal = {"text": "ship it", "status": "active", "startedAt": 1, "turnCount": 0, "maxTurns": 5}
    write_session(workdir, sid(1), ["one"], meta={"model": "vendor/model-x", "goal": goal, "permissionMode": "acceptEdits"})
    plan = _plan(workdir, reference=sid(1))
    assert (plan.model, plan.goal, plan.permission_mode) == ("vendor/model-x", goal, "acceptEdits")
    assert _plan(workdir, reference=sid(1), model_override="offline").model == "offline"
    assert _plan(workdir, files=SessionFiles.for_transcript(plan.files.transcript), source="slash",
                 model_override="offline").model == "vendor/model-x"  # /resume always adopts it
    assert _plan(workdir, files=plan.files, source="picker").permission_mode is None
    assert _plan(workdir, continue_last=True).permission_mode == "acceptEdits"
    for mode in ("plan", "bypassPermissions"):
        write_session(workdir, sid(2), ["two"], meta={"permissionMode": mode})
        assert _plan(workdir, reference=sid(2)).permission_mode is None


def test_sessions_show_reports_the_meta_model(home: Path, workdir: Path) -> None:
    write_session(workdir, sid(1), ["one"], meta={"model": "vendor/model-x"})
    assert run_json(["sessions", "show", sid(1), "--json"], workdir, home)["model"] == "vendor/model-x"


def test_a_session_whose_directory_is_gone_is_relinked_with_its_sidecars(home: Path, workdir: Path,
                                                                        tmp_path: Path) -> None:
    gone = tmp_path / "deleted-project"
    gone.mkdir()
    transcript = write_session(gone, sid(1), ["from the old place"], meta={"title": "moved"})
    checkpoints = transcript.with_name(f"{sid(1)}.checkpoints.jsonl")
    checkpoints.write_text("")
    gone.rmdir()
    header = transcript.read_bytes()
    plan = _plan(workdir, reference=sid(1))
    assert plan.missing_cwd == str(gone) and plan.run_dir == workdir
    plan.relink()
    moved = project_dir(workdir) / f"{sid(1)}.jsonl"
    assert moved.read_bytes() == header  # the header is not rewritten
    assert (project_dir(workdir) / f"{sid(1)}.meta.json").is_file()
    assert (project_dir(workdir) / f"{sid(1)}.checkpoints.jsonl").is_file()
    assert not transcript.exists() and not checkpoints.exists()
    assert _plan(workdir, reference="moved").files.transcript == moved


def test_relink_on_the_command_line_refuses_a_live_directory(home: Path, workdir: Path, tmp_path: Path) -> None:
    from helpers.cli import run_cli

    alive = tmp_path / "alive"
    alive.mkdir()
    write_session(alive, sid(1), ["still here"])
    before = snapshot(home / "projects")
    refused = run_cli(["sessions", "relink", sid(1)], workdir, home)
    assert refused.returncode == 1 and "still exists" in refused.stderr.splitlines()[0]
    assert snapshot(home / "projects") == before
    alive.rename(tmp_path / "renamed")
    done = run_cli(["sessions", "relink", sid(1)], workdir, home)
    assert done.returncode == 0, done.stderr
    assert (project_dir(workdir) / f"{sid(1)}.jsonl").is_file()


def test_a_big_idle_session_offers_a_summary(home: Path, workdir: Path) -> None:
    transcript = write_session(workdir, sid(1), ["x" * 250_000, "y" * 250_000])
    os.utime(transcript, (1, 1))
    now = transcript.stat().st_mtime + 7200
    assert _plan(workdir, reference=sid(1), now=now).offer_summary is True
    assert _plan(workdir, reference=sid(1), now=transcript.stat().st_mtime + 60).offer_summary is False
    write_session(workdir, sid(2), ["small"])
    assert _plan(workdir, reference=sid(2), now=now + 1e9).offer_summary is False


def test_a_session_another_process_writes_is_offered_read_only(home: Path, workdir: Path) -> None:
    transcript = write_session(workdir, sid(1), ["busy"])
    holder = hold_writer(transcript, workdir, home)
    try:
        plan = _plan(workdir, reference=sid(1))
        assert plan.locked_by == holder.pid
        with pytest.raises(SessionLockedError) as refused:
            plan.open()
        assert str(holder.pid) in str(refused.value) and refused.value.hint
        before = transcript.read_bytes()
        with plan.read_only() as agent:
            assert agent.handle.messages and agent.handle.messages[0]["role"] == "user"
            agent.turns.run_turn("not saved")
        assert transcript.read_bytes() == before
    finally:
        stop(holder)
    assert _plan(workdir, reference=sid(1)).locked_by is None


def test_a_session_of_another_directory_resumes_there(home: Path, workdir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    write_session(other, sid(1), ["elsewhere"])
    plan = _plan(workdir, reference=sid(1))
    assert plan.run_dir == other and plan.missing_cwd is None
    with plan.open() as agent:
        assert agent.cwd == other
