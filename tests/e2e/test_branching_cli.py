"""`commandcode sessions fork|clone|label|goto` and `commandcode tree` through real processes:
outputs, files, and the one-line errors (exit 1 refused, exit 2 usage) that lose nothing."""

from __future__ import annotations

import json
from pathlib import Path

from commandcode.sessions.reader import open_session
from helpers.cli import assert_error_lines, run_cli, snapshot
from helpers.trees import branched_session


def test_fork_json_then_resume_the_fork(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    before = files.transcript.read_bytes()
    completed = run_cli(["sessions", "fork", files.session_id, "--name", "try it", "--json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    printed = json.loads(completed.stdout)
    assert set(printed) == {"id", "path", "parent_session_id"} and printed["parent_session_id"] == files.session_id
    assert Path(printed["path"]).is_file() and files.transcript.read_bytes() == before
    resumed = run_cli(["-p", "hello fork", "-r", "try it"], workdir, home)
    assert resumed.returncode == 0, resumed.stderr
    fork = open_session(printed["path"])
    assert fork.name == "try it" and ids["a5"] in fork.context().entry_ids
    assert files.transcript.read_bytes() == before


def test_clone_json_and_text(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    printed = json.loads(run_cli(["sessions", "clone", files.session_id, "--json"], workdir, home).stdout)
    clone = open_session(printed["path"])
    assert clone.header.parent_session == str(files.transcript) and ids["u2"] not in {r.id for r in clone.tree_rows()}
    text = run_cli(["sessions", "clone", files.session_id], workdir, home)
    assert text.returncode == 0 and text.stdout.startswith(f"cloned {files.session_id} into ")


def test_goto_with_a_summary_then_label_then_resume(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    moved = run_cli(["sessions", "goto", files.session_id, ids["a3"], "--summary", "B tried a write", "--json"], workdir, home)
    assert moved.returncode == 0, moved.stderr
    result = json.loads(moved.stdout)
    assert result["target"] == ids["a3"] and result["left_entries"] == 4 and result["summary_entry_id"] == result["leaf_id"]
    session = open_session(files.transcript)
    entry = session.read_entries([session.leaf_id])[0]
    assert entry["type"] == "branch_summary" and entry["summary"] == "B tried a write"
    assert entry["details"] == {"readFiles": [], "modifiedFiles": [str(workdir / "b.txt")]}
    labelled = run_cli(["sessions", "label", files.session_id, ids["u2"][:5], "A branch"], workdir, home)
    assert labelled.returncode == 0 and labelled.stdout.strip() == f"labelled entry {ids['u2']}"
    assert open_session(files.transcript).labels() == {ids["u2"]: "A branch"}
    cleared = run_cli(["sessions", "label", files.session_id, ids["u2"]], workdir, home)
    assert cleared.returncode == 0 and open_session(files.transcript).labels() == {}
    resumed = run_cli(["-p", "continue on A", "-r", files.session_id], workdir, home)
    assert resumed.returncode == 0
    context = open_session(files.transcript).context().entry_ids
    assert ids["a3"] in context and ids["a5"] not in context


def test_goto_default_summary_follows_the_setting(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    settings = workdir / ".commandcode" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"branchSummary": false}\n')
    moved = json.loads(run_cli(["sessions", "goto", files.session_id, ids["u2"], "--json"], workdir, home).stdout)
    assert moved["summary_entry_id"] is None
    settings.write_text('{"branchSummary": true}\n')
    moved = json.loads(run_cli(["sessions", "goto", files.session_id, ids["a5"], "--json"], workdir, home).stdout)
    summary = open_session(files.transcript).read_entries([moved["summary_entry_id"]])[0]
    assert summary["type"] == "branch_summary" and "**Goal**" in summary["summary"]  # the offline model's extractive one


def test_bad_inputs_are_one_line_and_change_nothing(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    (workdir / "keep.txt").write_text("mine")
    run_cli(["sessions", "fork", files.session_id, "--name", "taken"], workdir, home)
    def files_state() -> dict[str, object]:  # lock files hold the last holder's pid: informational
        return {path: state for path, state in snapshot(home).items() if not path.startswith("locks/")}

    before = files_state()
    cases = [
        (["sessions", "fork", "no-such-session"], "no session matches", 1),
        (["sessions", "fork", files.session_id, "--name", "TAKEN"], "is taken", 1),
        (["sessions", "fork", files.session_id, "--name", "x" * 201], "the limit is 200", 2),
        (["sessions", "fork", files.session_id, "--name", " "], "empty", 2),
        (["sessions", "goto", files.session_id, "zzzz"], "no entry", 1),
        (["sessions", "goto", files.session_id, ids["a5"]], "already at entry", 1),
        (["sessions", "goto", files.session_id, ids["u2"], "--summary", "x", "--no-summary"], "cannot be used together", 2),
        (["sessions", "goto", files.session_id, ids["u2"], "--summary", "  "], "summary is empty", 2),
        (["sessions", "label", files.session_id, "zz"], "no entry", 1),
        (["sessions", "goto", files.session_id], "Missing argument", 2),
        (["tree", files.session_id], "needs a terminal", 2),
        (["tree", "no-such-session"], "no session matches", 1),  # the reference first, terminal or not
    ]
    for args, message, code in cases:
        assert_error_lines(run_cli(args, workdir, home), error_contains=message, exit_code=code)
    assert files_state() == before


def test_a_locked_session_is_refused_for_goto_and_label(home: Path, workdir: Path) -> None:
    from helpers.cli import hold_writer, stop

    files, ids = branched_session(workdir)
    holder = hold_writer(files.transcript, workdir, home)
    try:
        before = files.transcript.read_bytes()
        assert_error_lines(run_cli(["sessions", "goto", files.session_id, ids["u2"]], workdir, home), error_contains="open for writing by process")
        assert_error_lines(run_cli(["sessions", "label", files.session_id, ids["u2"], "x"], workdir, home),
                           error_contains="open for writing by process")
        assert files.transcript.read_bytes() == before
        fork = run_cli(["sessions", "fork", files.session_id, "--json"], workdir, home)  # a fork only reads
        assert fork.returncode == 0
    finally:
        stop(holder)


def test_a_rewind_in_a_fork_restores_from_the_shared_store(home: Path, workdir: Path) -> None:
    target = workdir / "hello.txt"
    first = json.loads(run_cli(["-p", 'call write_file {"file_path": "hello.txt", "content": "one\\n"}',
                                "--output-format", "json"], workdir, home).stdout)
    session_id = first["session_id"]
    assert run_cli(["-p", 'call write_file {"file_path": "hello.txt", "content": "two\\n"}', "-r", session_id],
                   workdir, home).returncode == 0
    objects_before = sorted(path.name for path in (home / "objects").rglob("*") if path.is_file())
    fork = json.loads(run_cli(["sessions", "fork", session_id, "--json"], workdir, home).stdout)
    assert sorted(path.name for path in (home / "objects").rglob("*") if path.is_file()) == objects_before  # shared
    source_checkpoints = Path(fork["path"]).with_name(f"{session_id}.checkpoints.jsonl")
    before = source_checkpoints.read_bytes()
    assert Path(fork["path"]).with_name(f"{fork['id']}.checkpoints.jsonl").read_bytes() == before
    rewound = run_cli(["rewind", fork["id"], "--to", "2", "--mode", "code", "--yes"], workdir, home)
    assert rewound.returncode == 0, rewound.stderr
    assert target.read_text() == "one\n"
    assert source_checkpoints.read_bytes() == before  # the fork's rewind leaves the source alone


def test_a_clone_says_how_many_corrupt_lines_it_left_out_and_a_fork_carries_them(home: Path, workdir: Path) -> None:
    """A clone re-chains what it keeps, so it leaves unreadable lines out and says so; a fork copies
    the body verbatim (the source is not scanned), so they come along and are skipped in the fork as
    in the source, with nothing to say."""
    files, _ids = branched_session(workdir)
    with open(files.transcript, "ab") as handle:
        handle.write(b"not json\n{\"half\": \n")
    source = open_session(files.transcript)
    cloned = run_cli(["sessions", "clone", files.session_id, "--json"], workdir, home)
    assert cloned.returncode == 0, cloned.stderr
    assert f"warning: {files.transcript.name}: 2 unreadable line(s) left out of the copy" in cloned.stderr
    assert open_session(json.loads(cloned.stdout)["path"]).skipped_lines == []
    forked = run_cli(["sessions", "fork", files.session_id, "--json"], workdir, home)
    assert forked.returncode == 0 and forked.stderr == "", forked.stderr
    fork = open_session(json.loads(forked.stdout)["path"])
    assert [line.line for line in fork.skipped_lines] == [line.line for line in source.skipped_lines] and \
        len(fork.skipped_lines) == 2
    assert fork.leaf_id == source.leaf_id and fork.entry_count == source.entry_count
