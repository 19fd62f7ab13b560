"""`commandcode sessions rename REF NAME`, `sessions status REF [--json]` and the trace ids of
`sessions show --json`, through real processes and files."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers.cli import (
    assert_error_lines,
    entries,
    hold_writer,
    only_transcript,
    read_meta_file,
    run_cli,
    run_json,
    run_ok,
    snapshot,
    stop,
    transcripts,
)


def _session(home: Path, workdir: Path, prompt: str, name: str | None = None) -> Path:
    args = ["-p", prompt] + (["-n", name] if name else [])
    run_ok(args, workdir, home)
    return max(transcripts(home, workdir), key=lambda path: path.stat().st_mtime_ns)


def test_rename_writes_a_session_info_entry_and_the_meta_title(home: Path, workdir: Path) -> None:
    transcript = _session(home, workdir, "first")
    completed = run_ok(["sessions", "rename", transcript.stem[:8], "  Auth\nRefactor  "], workdir, home)
    assert "Auth Refactor" in completed.stdout
    last = entries(transcript)[-1]
    assert last["type"] == "session_info" and last["name"] == "Auth Refactor"
    meta = read_meta_file(transcript)
    assert meta["title"] == "Auth Refactor" and meta["userRenamed"] is True and meta["entrypoint"] == "print"
    shown = run_json(["sessions", "show", "auth refactor", "--json"], workdir, home)
    assert shown["name"] == "Auth Refactor"
    assert run_json(["sessions", "rename", "auth refactor", "Renamed", "--json"], workdir, home) == \
        {"id": transcript.stem, "name": "Renamed"}


def test_a_taken_empty_or_over_long_name_is_one_line_and_changes_nothing(home: Path, workdir: Path) -> None:
    first = _session(home, workdir, "first", "Alpha")
    second = _session(home, workdir, "second")
    before = snapshot(home)
    taken = run_cli(["sessions", "rename", second.stem, " ALPHA "], workdir, home)
    assert_error_lines(taken, error_contains=f"the name 'ALPHA' is taken by session {first.stem}", exit_code=1)
    assert_error_lines(run_cli(["sessions", "rename", second.stem, "  "], workdir, home),
                       error_contains="the session name is empty", exit_code=2)
    assert_error_lines(run_cli(["sessions", "rename", second.stem, "n" * 201], workdir, home),
                       error_contains="201 characters long; the limit is 200", exit_code=2)
    assert_error_lines(run_cli(["sessions", "rename", "no-such", "x"], workdir, home),
                       error_contains="no session matches", exit_code=1)
    assert {k: v for k, v in snapshot(home).items() if "locks" not in k} == {k: v for k, v in before.items() if "locks" not in k}
    run_ok(["sessions", "rename", first.stem, "alpha"], workdir, home)  # its own name, in another case, is fine
    run_ok(["sessions", "rename", second.stem, "n" * 200], workdir, home)


def test_rename_of_a_session_another_process_writes_is_refused(home: Path, workdir: Path) -> None:
    transcript = _session(home, workdir, "first")
    holder = hold_writer(transcript, workdir, home)
    try:
        before = transcript.read_bytes()
        completed = run_cli(["sessions", "rename", transcript.stem, "busy"], workdir, home)
        assert completed.returncode == 1 and completed.stderr.startswith("error: ")
        assert transcript.read_bytes() == before
    finally:
        stop(holder)


def test_status_json_and_text(home: Path, workdir: Path) -> None:
    (workdir / "f.txt").write_text("before\n")
    transcript = _session(home, workdir, 'call edit_file {"file_path": "f.txt", "old_string": "before", "new_string": "after"}',
                          "Status Me")
    status = run_json(["sessions", "status", "status me", "--json"], workdir, home)
    assert status["id"] == transcript.stem and status["path"] == str(transcript) and status["name"] == "Status Me"
    assert status["cwd"] == str(workdir) and status["model"] == "commandcode/offline"
    assert status["context_tokens"] > 0 and status["context_window"] == 200_000
    assert status["checkpoints"]["count"] == 1 and status["checkpoints"]["backups"] == 1
    assert status["checkpoints"]["store_bytes"] > 0 and status["checkpoints"]["paused"] is False
    assert status["lineage"] == {"parent_session_id": None, "forked_at": None, "branch_point": None, "kind": None}
    assert status["compaction"]["count"] == 0 and status["cost_usd"] == 0.0
    assert len(status["trace_ids"]) == 1 and re.fullmatch(r"[0-9a-f]{32}", status["trace_ids"][0])
    text = run_ok(["sessions", "status", transcript.stem], workdir, home).stdout
    for label in ("id:", "path:", "name: Status Me", "checkpoints: 1 checkpoint(s), 1 backup(s)", "trace:"):
        assert label in text, label


def test_show_json_lists_the_trace_ids_of_every_turn(home: Path, workdir: Path) -> None:
    transcript = _session(home, workdir, "one")
    run_ok(["-p", "two", "-r", transcript.stem], workdir, home)
    run_ok(["-p", "three", "-c"], workdir, home)
    shown = run_json(["sessions", "show", transcript.stem, "--json"], workdir, home)
    assert shown["trace_ids"] == read_meta_file(transcript)["traceIds"]
    assert len(set(shown["trace_ids"])) == 3


def test_trace_ids_keep_the_newest_100(home: Path, workdir: Path) -> None:
    transcript = _session(home, workdir, "one")
    meta_path = transcript.with_name(transcript.stem + ".meta.json")
    meta = json.loads(meta_path.read_text())
    meta["traceIds"] = [f"{number:032x}" for number in range(1, 101)]
    meta_path.write_text(json.dumps(meta))
    run_ok(["-p", "two", "-c"], workdir, home)
    ids = read_meta_file(transcript)["traceIds"]
    assert len(ids) == 100 and ids[0] == f"{2:032x}" and ids[-1] not in meta["traceIds"]


def test_p_writes_no_prompt_history(home: Path, workdir: Path) -> None:
    _session(home, workdir, "headless")
    assert not (home / "history.jsonl").exists()
    assert only_transcript(home, workdir).exists()


def test_status_says_cloned_for_a_clone_and_forked_for_a_fork(home: Path, workdir: Path) -> None:
    transcript = _session(home, workdir, "hello", "Lineage Source")
    for command, word in (("fork", "forked"), ("clone", "cloned")):
        copy = run_json(["sessions", command, transcript.stem, "--json"], workdir, home)
        copy_id = copy.get("session_id") or copy.get("id")
        status = run_json(["sessions", "status", copy_id, "--json"], workdir, home)
        assert status["lineage"]["parent_session_id"] == transcript.stem and status["lineage"]["kind"] == command
        text = run_ok(["sessions", "status", copy_id], workdir, home).stdout
        assert f"lineage: {word} from {transcript.stem} at " in text, text
