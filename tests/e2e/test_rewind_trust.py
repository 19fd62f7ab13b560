"""Issue 26 §4, as a user meets it: rewinds that lost work or showed the wrong past. Real
`commandcode` processes, real files, the offline model's `call write_file` turns. Each case fails
on 55fdfa8 (noted per test).

The classes, with the members found beyond the issue's examples:

- a redo overwrites a state no record brings back: after a new turn (the example), and when
  forced over an outside edit (the example); also after a *conversation-only* rewind and a new
  turn (the turn's files were overwritten the same way);
- phantom checkpoints: a turn started with every earlier checkpoint rewound past was read as
  following the previous record in file order (the example is `--to 1`); also a summary offered
  for a checkpoint a rewind passed, which summarized a conversation it is not part of;
- the wrong past in the context: `summarize-to` of a turn started after a rewind failed ("not in
  the current context"), and one started after a compaction kept the compacted turns again;
  summarizing across an earlier compaction repeated or undid it (now refused with one line).
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import assert_error_lines, only_transcript, run_cli, run_json, run_ok


def _write_call(path: str, content: str) -> str:
    return "call write_file " + json.dumps({"file_path": path, "content": content})


def _turn(cwd: Path, data: Path, prompt: str, session: str | None = None) -> str:
    run_ok(["-p", prompt] + (["-r", session] if session else []), cwd, data)
    return only_transcript(data, cwd).name[: -len(".jsonl")]


def _rewind(cwd: Path, data: Path, session: str, *args: str) -> None:
    run_ok(["rewind", session, *args, "--yes"], cwd, data)


def _listed(cwd: Path, data: Path, session: str) -> list[int]:
    return [row["number"] for row in run_json(["checkpoints", "list", session, "--json"], cwd, data)["checkpoints"]]


def _can_redo(cwd: Path, data: Path, session: str) -> bool:
    return bool(run_json(["checkpoints", "list", session, "--json"], cwd, data)["canRedo"])


def test_a_redo_after_a_new_turn_is_refused_and_the_turns_edits_stay(home: Path, workdir: Path) -> None:
    # 55fdfa8: the redo put a.txt back to "two" and deleted b.txt; "three" and b.txt were in no
    # checkpoint any command could rewind to.
    session = _turn(workdir, home, _write_call("a.txt", "one"))
    _turn(workdir, home, _write_call("a.txt", "two"), session)
    _rewind(workdir, home, session, "--to", "2", "--mode", "both")
    _turn(workdir, home, _write_call("a.txt", "three") + "\n" + _write_call("b.txt", "new"), session)
    assert not _can_redo(workdir, home, session)
    completed = run_cli(["rewind", session, "--redo", "--yes"], workdir, home)
    assert "cannot redo: 1 turn(s) were made since the rewind to checkpoint 2" in assert_error_lines(completed)
    assert (workdir / "a.txt").read_text() == "three" and (workdir / "b.txt").read_text() == "new"


def test_a_redo_after_a_conversation_rewind_and_a_new_turn_is_refused(home: Path, workdir: Path) -> None:
    session = _turn(workdir, home, _write_call("a.txt", "one"))
    _turn(workdir, home, _write_call("a.txt", "two"), session)
    _rewind(workdir, home, session, "--to", "2", "--mode", "conversation")
    _turn(workdir, home, _write_call("b.txt", "branch"), session)
    completed = run_cli(["rewind", session, "--redo", "--yes"], workdir, home)
    assert_error_lines(completed, error_contains="cannot redo")
    assert (workdir / "b.txt").read_text() == "branch"


def test_an_outside_edit_a_forced_redo_overwrote_comes_back_with_the_next_redo(home: Path, workdir: Path) -> None:
    # 55fdfa8: the second redo said "nothing to redo"; the hand edit was in no reachable record.
    session = _turn(workdir, home, _write_call("a.txt", "one"))
    _turn(workdir, home, _write_call("a.txt", "two"), session)
    _rewind(workdir, home, session, "--to", "2", "--mode", "code")
    (workdir / "a.txt").write_text("by hand")
    refused = run_cli(["rewind", session, "--redo", "--yes"], workdir, home)
    assert refused.returncode == 1 and (workdir / "a.txt").read_text() == "by hand"
    forced = run_ok(["rewind", session, "--redo", "--yes", "--force"], workdir, home)
    assert (workdir / "a.txt").read_text() == "two"
    assert "the outside edits it overwrote were kept: --redo brings them back" in forced.stderr
    assert _can_redo(workdir, home, session)
    again = run_ok(["rewind", session, "--redo", "--yes"], workdir, home)
    assert (workdir / "a.txt").read_text() == "by hand"
    assert "Undid the redo of the rewind to checkpoint 2" in again.stderr
    run_ok(["rewind", session, "--redo", "--yes", "--force"], workdir, home)  # the rewind's redo, once more
    assert (workdir / "a.txt").read_text() == "two"


def test_no_phantom_checkpoints_after_rewinding_past_every_one(home: Path, workdir: Path) -> None:
    # 55fdfa8: the list showed 1 and 2 again (the new turn was read as following 2 in file
    # order), though the conversation holds neither prompt.
    session = _turn(workdir, home, "first\n" + _write_call("a.txt", "one"))
    _turn(workdir, home, "second", session)
    _rewind(workdir, home, session, "--to", "1", "--mode", "conversation")
    _turn(workdir, home, "third", session)
    assert _listed(workdir, home, session) == [3]
    _rewind(workdir, home, session, "--to", "3", "--mode", "conversation")
    assert _listed(workdir, home, session) == []
    context = run_json(["sessions", "context", session, "--json"], workdir, home)["messages"]
    assert context == []


def test_a_rewound_checkpoint_offers_no_summary(home: Path, workdir: Path) -> None:
    # 55fdfa8: summarize-from 2 was offered and summarized "turn three", a turn of another branch.
    session = _turn(workdir, home, "one")
    _turn(workdir, home, "two", session)
    _rewind(workdir, home, session, "--to", "2", "--mode", "conversation")
    _turn(workdir, home, "three", session)
    completed = run_cli(["rewind", session, "--to", "2", "--mode", "summarize-from", "--yes"], workdir, home)
    assert_error_lines(completed, error_contains="does not offer --mode summarize-from")


def test_summarize_to_a_turn_started_after_a_rewind(home: Path, workdir: Path) -> None:
    # 55fdfa8: "entry … is not in the current context" (the turn started at the rewind's leaf marker).
    session = _turn(workdir, home, "one")
    _turn(workdir, home, "two", session)
    _rewind(workdir, home, session, "--to", "2", "--mode", "conversation")
    _turn(workdir, home, "three", session)
    _rewind(workdir, home, session, "--to", "3", "--mode", "summarize-to")
    texts = [json.dumps(message) for message in
             run_json(["sessions", "context", session, "--json"], workdir, home)["messages"]]
    assert "summary" in texts[0] and '"three"' in texts[1] and len(texts) == 3


def test_stale_fork_temps_are_removed_and_a_live_one_is_kept(home: Path, workdir: Path) -> None:
    # 55fdfa8: no fork, sweep or `doctor --gc` removed a killed fork's transcript temp.
    import subprocess
    import sys

    session = _turn(workdir, home, "one")
    folder = only_transcript(home, workdir).parent
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    stale = folder / f".{session}.jsonl.{dead}.tmp"
    stale.write_bytes(b"a copy of the transcript\n" * 1000)
    live_process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = folder / f".{session}-other.jsonl.{live_process.pid}.tmp"
        live.write_bytes(b"still being written\n")
        run_ok(["sessions", "fork", session, "--json"], workdir, home)
        assert not stale.exists() and live.exists()
        stale.write_bytes(b"left again\n")
        report = run_json(["doctor", "--gc", "--json"], workdir, home)
        assert not stale.exists() and live.exists() and report["removed_temporaries"] >= 1
        stale.write_bytes(b"left again\n")
        run_ok(["sweep"], workdir, home)
        assert not stale.exists() and live.exists()
    finally:
        live_process.kill()
        live_process.wait()
