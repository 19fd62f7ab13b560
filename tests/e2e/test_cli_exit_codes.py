"""Exit codes and the smaller CLI notices (issue 11, class 6).

README: 0 success, 1 a refused or failed operation, 2 a usage error; either way one `error:`
line on stderr (maybe a `hint:` line), never a traceback, and nothing written. Matrices: every
usage error we know of (ours and the command-line parser's), every refusal; then a turn that
does not finish, `--no-session`, `-c` passing over a session it cannot open, a refused bench,
and a rewind refused for files outside the session's folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers.cli import run_cli, run_json, snapshot, transcripts

SID_TOKEN = "{sid}"

USAGE_ERRORS: dict[str, list[str]] = {
    "-r with -c": ["-p", "x", "-r", SID_TOKEN, "-c"],
    "-p with a subcommand": ["-p", "x", "sessions", "list"],
    "--output-format xml": ["-p", "x", "--output-format", "xml"],
    "--model gpt": ["-p", "x", "--model", "gpt"],
    "an empty prompt": ["-p", "  "],
    "-p without its value": ["-p"],
    "-r without its value": ["-p", "x", "-r"],
    "an unknown option": ["--bogus"],
    "an unknown option of a subcommand": ["sessions", "list", "--bogus"],
    "an unknown command": ["sessions", "nothing"],
    "an unknown top command": ["nothing"],
    "a missing REF": ["sessions", "show"],
    "an extra argument": ["sessions", "show", SID_TOKEN, "extra"],
    "a negative --offset": ["sessions", "tree", SID_TOKEN, "--offset", "-1"],
    "a --limit that is not a number": ["sessions", "tree", SID_TOKEN, "--limit", "x"],
    "checkpoints list without REF": ["checkpoints", "list"],
    "rewind without REF": ["rewind", "--to", "1", "--mode", "code"],
    "rewind without --to": ["rewind", SID_TOKEN, "--mode", "code"],
    "rewind without --mode": ["rewind", SID_TOKEN, "--to", "1"],
    "rewind without --yes": ["rewind", SID_TOKEN, "--to", "1", "--mode", "code"],
    "an unknown --mode": ["rewind", SID_TOKEN, "--to", "1", "--mode", "sideways"],
    "a --to that is not a number": ["rewind", SID_TOKEN, "--to", "two", "--mode", "code", "--yes"],
    "bench --size 0": ["bench", "--size", "0"],
    "bench --size lots": ["bench", "--size", "lots"],
    "bench --size -5MB": ["bench", "--size", "-5MB"],
    "bench --runs 0": ["bench", "--runs", "0"],
}


@pytest.fixture
def one_session(home: Path, workdir: Path) -> str:
    """A session with one turn (checkpoint 1), the data dir's only one."""
    return run_json(["-p", "hello", "--output-format", "json"], workdir, home)["session_id"]


def _assert_one_error(completed, code: int, what: str) -> str:  # type: ignore[no-untyped-def]
    shown = f"{what}: exit {completed.returncode}\nstdout: {completed.stdout}\nstderr: {completed.stderr}"
    assert "Traceback" not in completed.stderr, shown
    assert completed.returncode == code, shown
    lines = completed.stderr.splitlines()
    assert 1 <= len(lines) <= 2 and lines[0].startswith("error: "), shown
    assert len(lines) == 1 or lines[1].startswith("hint: "), shown
    return lines[0]


@pytest.mark.parametrize("fast_path", ["on", "off"])
def test_every_usage_error_exits_2_with_one_line_and_writes_nothing(home: Path, workdir: Path, one_session: str,
                                                                     tmp_path: Path, fast_path: str) -> None:
    before = snapshot(home)
    for what, template in USAGE_ERRORS.items():
        args = [one_session if token == SID_TOKEN else token for token in template]
        completed = run_cli(args, workdir, home, COMMANDCODE_FAST_PATH=fast_path, TMPDIR=str(tmp_path))
        _assert_one_error(completed, 2, what)
        assert completed.stdout == "", what
        assert snapshot(home) == before, what
    assert not list(tmp_path.glob("commandcode-bench-*"))


REFUSALS: dict[str, list[str]] = {
    "-r naming no session": ["-p", "x", "-r", "no-such-session"],
    "sessions show naming no session": ["sessions", "show", "no-such-session"],
    "checkpoints list naming no session": ["checkpoints", "list", "no-such-session"],
    "rewind naming no session": ["rewind", "no-such-session", "--to", "1", "--mode", "code", "--yes"],
    "a rewind of a session without checkpoints": ["rewind", SID_TOKEN, "--to", "1", "--mode", "code", "--yes"],
}


def test_every_refusal_exits_1_with_one_line(home: Path, workdir: Path, tmp_path: Path) -> None:
    session = run_json(["-p", "hello", "--output-format", "json"], workdir, home)["session_id"]
    [transcript] = transcripts(home)
    transcript.with_name(f"{session}.checkpoints.jsonl").unlink()
    before = snapshot(home)
    for what, template in REFUSALS.items():
        args = [session if token == SID_TOKEN else token for token in template]
        _assert_one_error(run_cli(args, workdir, home), 1, what)
        assert snapshot(home) == before, what
    empty = tmp_path / "empty"
    empty.mkdir()
    _assert_one_error(run_cli(["-p", "x", "-c"], empty, home), 1, "-c with nothing to continue")


# Well-formed requests that this session's data cannot satisfy: refusals (1), not usage errors.
DATA_REFUSALS: dict[str, list[str]] = {
    "a --to naming no checkpoint": ["rewind", SID_TOKEN, "--to", "9", "--mode", "code", "--yes"],
    "a mode the checkpoint does not offer": ["rewind", SID_TOKEN, "--to", "1", "--mode", "summarize-to", "--yes"],
}


@pytest.mark.parametrize("fast_path", ["on", "off"])
def test_a_request_the_session_cannot_satisfy_is_a_refusal(home: Path, workdir: Path, one_session: str,
                                                           fast_path: str) -> None:
    before = snapshot(home)
    for what, template in DATA_REFUSALS.items():
        args = [one_session if token == SID_TOKEN else token for token in template]
        _assert_one_error(run_cli(args, workdir, home, COMMANDCODE_FAST_PATH=fast_path), 1, what)
        assert snapshot(home) == before, what


def _unfinished_prompt() -> str:
    from commandcode.agent.turn import MAX_STEPS_PER_TURN

    return "\n".join(['call no_such_tool {}'] * MAX_STEPS_PER_TURN)  # each call is a step; the answer is one more


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_turn_that_does_not_finish_exits_1_with_the_error_line(home: Path, workdir: Path, output_format: str) -> None:
    completed = run_cli(["-p", _unfinished_prompt(), "--output-format", output_format], workdir, home)
    line = _assert_one_error(completed, 1, "an unfinished turn")
    assert line == "error: the turn failed: the model did not finish within 64 steps"
    if output_format == "json":
        result = json.loads(completed.stdout)
        assert result["is_error"] is True and result["error"] == "the model did not finish within 64 steps"
    else:
        assert completed.stdout.strip() == ""  # no empty "reply" that looks like success
    [transcript] = transcripts(home)
    last = json.loads(transcript.read_bytes().splitlines()[-1])
    assert last["message"]["content"][0]["text"] == "Error: the model did not finish within 64 steps"


def test_no_session_says_its_edits_are_not_checkpointed(home: Path, workdir: Path) -> None:
    completed = run_cli(["-p", 'call write_file {"file_path": "made.txt", "content": "x"}', "--no-session"],
                        workdir, home)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr.splitlines() == [
        "warning: --no-session: this turn's edits are not checkpointed; no rewind can undo them"]
    assert (workdir / "made.txt").read_text() == "x"
    assert not home.exists()
    plain = run_cli(["-p", "hi"], workdir, home)
    assert plain.returncode == 0 and plain.stderr == ""  # the notice is for --no-session only


def test_continue_says_which_newer_session_it_skipped_and_why(home: Path, workdir: Path) -> None:
    older = run_json(["-p", "older", "--output-format", "json"], workdir, home)["session_id"]
    newer = run_json(["-p", "newer", "--output-format", "json"], workdir, home)["session_id"]
    [newer_path] = [path for path in transcripts(home) if path.name == f"{newer}.jsonl"]
    newer_path.write_text('{"type":"session","version":99,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
                          % newer)
    os.utime(newer_path, None)
    before = newer_path.read_bytes()
    completed = run_cli(["-p", "continued", "-c"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    [notice] = completed.stderr.splitlines()
    assert notice.startswith(f"warning: -c skipped the newer session {newer}: "), notice
    assert "version 99" in notice and notice.endswith(f"; continuing {older}"), notice
    assert newer_path.read_bytes() == before
    # A session older than the one continued is not worth a notice.
    again = run_cli(["-p", "continued again", "-c"], workdir, home)
    assert again.returncode == 0 and again.stderr == "", again.stderr


def test_a_refused_bench_leaves_no_folder(home: Path, workdir: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    too_big = ["bench", "--size", "1000000TB"]
    _assert_one_error(run_cli(too_big, workdir, home, TMPDIR=str(scratch)), 1, "a bench with no room")
    assert list(scratch.iterdir()) == []
    asked = tmp_path / "not" / "there"
    _assert_one_error(run_cli([*too_big, "--dir", str(asked)], workdir, home), 1, "a bench with no room in --dir")
    assert not (tmp_path / "not").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    _assert_one_error(run_cli([*too_big, "--dir", str(mine)], workdir, home), 1, "a bench with no room in my folder")
    assert [path.name for path in mine.iterdir()] == ["keep.txt"]


def test_a_rewind_refused_for_outside_files_says_how_to_allow_them(home: Path, tmp_path: Path) -> None:
    home_folder, other_folder = tmp_path / "a", tmp_path / "b"
    home_folder.mkdir()
    other_folder.mkdir()
    session = run_json(["-p", "first", "--output-format", "json"], home_folder, home)["session_id"]
    edit = run_cli(["-r", session, "-p", 'call write_file {"file_path": "b.txt", "content": "x"}'], other_folder, home)
    assert edit.returncode == 0, edit.stderr
    for mode in ("code", "both"):
        refused = run_cli(["rewind", session, "--to", "2", "--mode", mode, "--yes"], other_folder, home)
        _assert_one_error(refused, 1, f"--mode {mode}")
        hint = refused.stderr.splitlines()[1]
        assert "--allow-outside" in hint and str(home_folder.resolve()) in hint, hint
        assert (other_folder / "b.txt").exists()
    dry = run_cli(["rewind", session, "--to", "2", "--mode", "code", "--dry-run"], other_folder, home)
    assert dry.returncode == 0 and "hint: " in dry.stderr and "--allow-outside" in dry.stderr, dry.stderr
    allowed = run_cli(["rewind", session, "--to", "2", "--mode", "code", "--yes", "--allow-outside"], other_folder, home)
    assert allowed.returncode == 0, allowed.stderr
    assert not (other_folder / "b.txt").exists()
