"""Ids win over names (issue 26 §5): a session cannot be named after another session's id or id
prefix, by any of the ways a name is given (`sessions rename`, the picker's rename, `/rename`),
and a name that already reads as an id (written by an older release or the real CLI) never takes
that id over: `rewind <id from the list>` acts on the session the list showed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commandcode.errors import CommandcodeError
from helpers.cli import assert_error_lines, run_cli
from helpers.session_files import write_session

A = "a1b2c3d4-0000-4000-8000-00000000000a"
B = "b9e8d7c6-0000-4000-8000-00000000000b"


@pytest.mark.parametrize("name", [A[:8], A[:4], A, A.upper()[:8], A[:13]])
def test_sessions_rename_refuses_another_sessions_id(home: Path, workdir: Path, name: str) -> None:
    write_session(workdir, A, ["first"])
    write_session(workdir, B, ["second"])
    refused = run_cli(["sessions", "rename", B, name], workdir, home)
    line = assert_error_lines(refused, error_contains=f"reads as the id of session {A}")
    assert "Traceback" not in refused.stderr and line
    shown = json.loads(run_cli(["sessions", "show", A[:8], "--json"], workdir, home).stdout)
    assert shown["id"] == A


def test_other_names_and_its_own_id_are_fine(home: Path, workdir: Path) -> None:
    write_session(workdir, A, ["first"])
    write_session(workdir, B, ["second"])
    for name in (B[:8], "deadbeef", "a1b2 c3d4", "feature a1b2c3d4"):
        done = run_cli(["sessions", "rename", B, name], workdir, home)
        assert done.returncode == 0, (name, done.stderr)


def test_an_id_prefix_wins_over_a_name_that_reads_as_it(home: Path, workdir: Path) -> None:
    write_session(workdir, A, ["first"])
    write_session(workdir, B, ["second"], meta={"title": A[:8], "userRenamed": True})
    for command in (["sessions", "show", A[:8], "--json"], ["checkpoints", "list", A[:8], "--json"]):
        done = run_cli(command, workdir, home)
        assert done.returncode == 0, done.stderr
        value = json.loads(done.stdout)
        assert value.get("id", value.get("session")) == A, value
    write_session(workdir, "c0c0c0c0-0000-4000-8000-00000000000c", ["third"], meta={"title": "release notes"})
    by_name = json.loads(run_cli(["sessions", "show", "release notes", "--json"], workdir, home).stdout)
    assert by_name["id"] == "c0c0c0c0-0000-4000-8000-00000000000c"  # names still resolve


def test_the_pickers_rename_and_slash_rename_refuse_it_too(home: Path, workdir: Path) -> None:
    from commandcode.agent.manage import rename_session
    from commandcode.agent.naming import checked_name
    from commandcode.sessions.files import SessionFiles

    write_session(workdir, A, ["first"])
    transcript = write_session(workdir, B, ["second"])
    with pytest.raises(CommandcodeError, match="reads as the id of session"):
        rename_session(SessionFiles.for_transcript(transcript), A[:8], workdir)
    with pytest.raises(CommandcodeError, match="reads as the id of session"):
        checked_name(A[:6], workdir, session_id=B)
    assert checked_name(A[:6], workdir, session_id=B, unique=False) == A[:6]  # --no-session: nothing saved


@pytest.mark.parametrize("name", ["a", "A", "a1", "a1b"])
def test_a_name_shorter_than_an_id_prefix_is_a_name(home: Path, workdir: Path, name: str) -> None:
    """Below `MIN_ID_PREFIX` characters a reference is a name only: a session named `A` (or `a1b`)
    is allowed beside a session whose id starts with those letters, and the name finds it (CI once
    refused `-n B` because a random id began with `b`)."""
    write_session(workdir, A, ["first"])
    write_session(workdir, B, ["second"])
    renamed = run_cli(["sessions", "rename", B, name], workdir, home)
    assert renamed.returncode == 0, renamed.stderr
    shown = json.loads(run_cli(["sessions", "show", name, "--json"], workdir, home).stdout)
    assert shown["id"] == B
    unknown = run_cli(["sessions", "show", "b9e", "--json"], workdir, home)
    assert "at least 4 characters" in assert_error_lines(unknown, error_contains="no session matches 'b9e'") + unknown.stderr
    short = run_cli(["-p", "hi", "--session", "b9e"], workdir, home)
    assert_error_lines(short, error_contains="no session matches 'b9e'")
    assert json.loads(run_cli(["sessions", "show", "b9e8", "--json"], workdir, home).stdout)["id"] == B
