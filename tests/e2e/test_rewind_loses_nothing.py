"""Issue 14's "what is wrong today", as a new user meets it: real `commandcode` processes, real
files, the offline model's `call write_file` turns. Each case failed before redo points existed
(rewinds dropped the checkpoints they passed, and with them the only record of later states)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import only_transcript, run_cli, run_json, run_ok


def _write_call(path: str, content: str) -> str:
    return "call write_file " + json.dumps({"file_path": path, "content": content})


def _turn(cwd: Path, data: Path, prompt: str, session: str | None = None) -> str:
    args = ["-p", prompt] + (["-r", session] if session else [])
    run_ok(args, cwd, data)
    return only_transcript(data, cwd).name[: -len(".jsonl")]


def _three_turns(cwd: Path, data: Path) -> str:
    session = _turn(cwd, data, _write_call("a.txt", "one"))
    _turn(cwd, data, _write_call("a.txt", "two"), session)
    _turn(cwd, data, _write_call("a.txt", "three"), session)
    return session


def _rewind(cwd: Path, data: Path, session: str, *args: str) -> None:
    run_ok(["rewind", session, *args, "--yes"], cwd, data)


def test_a_rewind_can_be_rewound_forward_again(home: Path, workdir: Path) -> None:
    session = _three_turns(workdir, home)
    _rewind(workdir, home, session, "--to", "2", "--mode", "both")
    assert (workdir / "a.txt").read_text() == "one"
    _rewind(workdir, home, session, "--to", "3", "--mode", "both")
    assert (workdir / "a.txt").read_text() == "two"


def test_the_state_before_a_rewind_comes_back_with_redo(home: Path, workdir: Path) -> None:
    session = _three_turns(workdir, home)
    context_before = run_json(["sessions", "context", session, "--json"], workdir, home)["messages"]
    _rewind(workdir, home, session, "--to", "2", "--mode", "both")
    assert len(run_json(["sessions", "context", session, "--json"], workdir, home)["messages"]) == len(context_before) // 3
    _rewind(workdir, home, session, "--redo")
    assert (workdir / "a.txt").read_text() == "three"
    assert run_json(["sessions", "context", session, "--json"], workdir, home)["messages"] == context_before


def test_our_own_edits_are_not_outside_edits_after_a_conversation_rewind(home: Path, workdir: Path) -> None:
    session = _three_turns(workdir, home)
    _turn(workdir, home, _write_call("extra/new.txt", "created late"), session)
    _rewind(workdir, home, session, "--to", "2", "--mode", "conversation")
    completed = run_cli(["rewind", session, "--to", "1", "--mode", "code", "--yes"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    assert not (workdir / "a.txt").exists()
    assert not (workdir / "extra" / "new.txt").exists()


def test_rewinding_back_and_forth_never_makes_a_tree_that_never_existed(home: Path, workdir: Path) -> None:
    session = _turn(workdir, home, _write_call("a.txt", "a1") + "\n" + _write_call("b.txt", "b1"))
    _turn(workdir, home, _write_call("b.txt", "b2"), session)
    _rewind(workdir, home, session, "--to", "1", "--mode", "code")
    assert not (workdir / "a.txt").exists() and not (workdir / "b.txt").exists()
    _rewind(workdir, home, session, "--to", "2", "--mode", "code")
    assert (workdir / "a.txt").read_text() == "a1"
    assert (workdir / "b.txt").read_text() == "b1"
    _rewind(workdir, home, session, "--redo")  # back to before the last rewind: turn 1's tree
    assert not (workdir / "a.txt").exists() and not (workdir / "b.txt").exists()
    _rewind(workdir, home, session, "--redo")  # and before the first: both turns' tree
    assert (workdir / "a.txt").read_text() == "a1"
    assert (workdir / "b.txt").read_text() == "b2"


def _context_after(mode_args: list[str], home: Path, workdir: Path) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    session = _three_turns(workdir, home)
    _rewind(workdir, home, session, *mode_args)
    started_from = run_json(["sessions", "context", session, "--json"], workdir, home)["messages"]
    _turn(workdir, home, "a fourth turn", session)
    _rewind(workdir, home, session, "--to", "4", "--mode", "conversation")
    return started_from, run_json(["sessions", "context", session, "--json"], workdir, home)["messages"]


def test_a_conversation_rewind_keeps_a_summary_from_here(home: Path, workdir: Path) -> None:
    started_from, now = _context_after(["--to", "2", "--mode", "summarize-from"], home, workdir)
    assert now == started_from


def test_a_conversation_rewind_keeps_a_summary_up_to_here(home: Path, workdir: Path) -> None:
    started_from, now = _context_after(["--to", "3", "--mode", "summarize-to"], home, workdir)
    assert now == started_from


def test_a_code_rewind_removes_the_folders_a_turn_created(home: Path, workdir: Path) -> None:
    (workdir / "kept").mkdir()
    session = _turn(workdir, home, _write_call("src/deep/new.py", "x = 1\n") + "\n"
                    + _write_call("kept/new.txt", "y"))
    _rewind(workdir, home, session, "--to", "1", "--mode", "code")
    assert not (workdir / "src").exists()
    assert (workdir / "kept").is_dir() and not (workdir / "kept" / "new.txt").exists()
