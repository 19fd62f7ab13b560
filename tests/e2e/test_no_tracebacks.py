"""Inputs that used to end in a Python traceback: each now gets one `error:` line or a result.

The examples of issue #11 class 5 and their neighbours (tree pages past the end or beyond a
machine integer, checkpoint counts that are not counts, a neighbour's meta with a non-string
title, bench sizes that cannot be generated), plus the catch-all net in the CLI entry point:
an exception no command handled is one `error: internal error (…)` line and a hint to report it,
exit 1; `COMMANDCODE_DEBUG=1` shows the traceback instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers.cli import cli_env, run_cli, run_json, run_ok, snapshot, transcripts


def assert_one_error(completed: subprocess.CompletedProcess[str], contains: str = "") -> None:
    assert completed.returncode == 1, completed
    lines = completed.stderr.splitlines()
    assert lines and lines[0].startswith("error: ") and len(lines) <= 2, lines
    assert "Traceback" not in completed.stderr and "internal error" not in completed.stderr, completed.stderr
    assert contains in lines[0], lines


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder.resolve()


def call(tool: str, **arguments: str) -> str:
    return f"call {tool} " + json.dumps(arguments)


# --------------------------------------------------------------------------------------------
# sessions tree pages


@pytest.mark.parametrize(("page", "shown"), [
    (["--offset", "3", "--limit", "1"], 0), (["--offset", "2"], 0), (["--offset", "2", "--limit", "5"], 0),
    (["--offset", "9" * 24], 0), (["--limit", "9" * 24], 2), (["--offset", "9" * 24, "--limit", "9" * 24], 0),
    (["--offset", "1", "--limit", str(2**64)], 1), (["--offset", str(2**63)], 0),
])
@pytest.mark.parametrize("as_json", [True, False])
def test_tree_pages_past_the_end_are_empty(home: Path, project: Path, page: list[str], shown: int, as_json: bool) -> None:
    run_ok(["-p", "hello"], project, home)  # two entries: the prompt and the reply
    (transcript,) = transcripts(home)
    command = ["sessions", "tree", transcript.stem, *page, *(["--json"] if as_json else [])]
    completed = run_cli(command, project, home)
    assert completed.returncode == 0, completed
    assert "Traceback" not in completed.stderr
    if as_json:
        tree = json.loads(completed.stdout)
        assert tree["entry_count"] == 2 and len(tree["entries"]) == shown


# --------------------------------------------------------------------------------------------
# checkpoint records whose messageCount is not a count


def two_turns(data: Path, project: Path) -> tuple[Path, Path]:
    run_ok(["-p", call("write_file", file_path="f.txt", content="one\n")], project, data)
    run_ok(["-c", "-p", call("write_file", file_path="f.txt", content="two\n")], project, data)
    (transcript,) = transcripts(data)
    return transcript, transcript.with_name(transcript.stem + ".checkpoints.jsonl")


def set_record_field(checkpoints: Path, number: int, **fields: object) -> None:
    records = [json.loads(line) for line in checkpoints.read_text().splitlines()]
    for key, value in fields.items():
        if value is KeyError:
            records[number - 1].pop(key, None)
        else:
            records[number - 1][key] = value
    checkpoints.write_text("".join(json.dumps(record) + "\n" for record in records))


@pytest.mark.parametrize("count", [-100, -1, True, False, 1.5, "2", None, [], {}])
@pytest.mark.parametrize("mode", ["conversation", "both"])
def test_a_message_count_that_is_not_a_count_refuses_the_conversation_rewind(home: Path, project: Path, count: object,
                                                                              mode: str) -> None:
    transcript, checkpoints = two_turns(home, project)
    # as the real CLI writes it: no `leafEntryId` (ours, which names the point exactly)
    set_record_field(checkpoints, 2, messageCount=count, lastMessageId=KeyError, leafEntryId=KeyError)
    listing = run_json(["checkpoints", "list", transcript.stem, "--json"], project, home)["checkpoints"]
    assert listing[1]["messageCount"] is None
    before = session_state(home), (project / "f.txt").read_bytes()
    for dry in ([], ["--dry-run"]):
        completed = run_cli(["rewind", transcript.stem, "--to", "2", "--mode", mode, "--yes", *dry], project, home)
        assert_one_error(completed)
        assert (session_state(home), (project / "f.txt").read_bytes()) == before  # nothing moved, not to a wrong point


def session_state(data: Path) -> dict[str, tuple[bytes | None, int]]:
    """The data dir without `locks/` (a rewind takes the writer lock, which records its pid)."""
    return {path: value for path, value in snapshot(data).items() if not path.startswith("locks/")}


def test_a_message_count_that_is_not_a_count_is_kept_as_written(home: Path, project: Path) -> None:
    """The record is rewritten by later turns (file hashes); its odd count stays what it was."""
    _transcript, checkpoints = two_turns(home, project)
    set_record_field(checkpoints, 1, messageCount=-100)
    run_ok(["-c", "-p", call("write_file", file_path="f.txt", content="three\n")], project, home)
    first = json.loads(checkpoints.read_text().splitlines()[0])
    assert first["messageCount"] == -100


def test_a_valid_last_message_id_still_wins_over_a_bad_count(home: Path, project: Path) -> None:
    transcript, checkpoints = two_turns(home, project)
    set_record_field(checkpoints, 2, messageCount=-1)
    run_ok(["rewind", transcript.stem, "--to", "2", "--mode", "conversation", "--yes"], project, home)
    context = run_json(["sessions", "context", transcript.stem, "--json"], project, home)
    assert len(context["messages"]) == 4  # turn 1 (prompt, tool call, result, reply), not a wrong point


# --------------------------------------------------------------------------------------------
# a neighbour's meta with a title that is not a string


@pytest.mark.parametrize("title", [["a", "list"], {"an": "object"}, 7, 1e308, True, None, "", "\x1b[31m"])
def test_a_neighbours_odd_title_breaks_no_lookup(home: Path, project: Path, title: object) -> None:
    run_ok(["-p", "mine", "-n", "Mine"], project, home)
    run_ok(["-p", "theirs", "-n", "Theirs"], project, home)
    by_name = {item["name"]: item["id"] for item in run_json(["sessions", "list", "--all", "--json"], project, home)}
    mine, theirs = by_name["Mine"], by_name["Theirs"]
    meta = next(path for path in transcripts(home) if path.stem == theirs).with_name(theirs + ".meta.json")
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "title": title, "name": title}))
    for ref in (mine, mine[:8], "mine", "MINE "):
        assert run_json(["sessions", "show", ref, "--json"], project, home)["id"] == mine
    assert run_json(["sessions", "show", theirs, "--json"], project, home)["id"] == theirs
    run_ok(["sessions", "show", theirs], project, home)
    run_ok(["sessions", "list", "--all"], project, home)
    run_ok(["-r", "mine", "-p", "again"], project, home)
    run_ok(["-r", mine[:8], "-p", "again"], project, home)
    missing = run_cli(["sessions", "show", "nobody"], project, home)
    assert_one_error(missing, "no session matches")


# --------------------------------------------------------------------------------------------
# bench sizes


@pytest.mark.parametrize("size", ["0", "0MB", "0.0001kB", "1", "1B", "9" * 400, "9" * 400 + "GB", "1e3", "-5", ""])
def test_bench_sizes_that_cannot_be_generated_are_refused(home: Path, tmp_path: Path, project: Path, size: str) -> None:
    work = tmp_path / "bench-dir"
    completed = run_cli(["bench", "--size", size, "--dir", str(work)], project, home)
    assert completed.returncode in (1, 2), completed
    assert "Traceback" not in completed.stderr and "internal error" not in completed.stderr, completed.stderr
    assert not work.exists() or not any(work.iterdir())


# --------------------------------------------------------------------------------------------
# the net


NET_SCRIPT = textwrap.dedent("""
    import sys
    from commandcode.cli import sessions_list, main

    def broken(*args, **kwargs):
        raise RuntimeError("planted \\x1b[31m failure\\nsecond line")

    sessions_list.list_view = broken
    sys.argv = ["commandcode", *sys.argv[1:]]
    main()
""")


@pytest.mark.parametrize("fast_path", ["on", "off"])
@pytest.mark.parametrize("argv", [["sessions", "list"], ["sessions", "list", "--all", "--json"]])
def test_an_unhandled_exception_is_one_line_and_exit_1(home: Path, project: Path, argv: list[str], fast_path: str) -> None:
    env = cli_env(home, COMMANDCODE_FAST_PATH=fast_path)
    completed = subprocess.run([sys.executable, "-c", NET_SCRIPT, *argv], cwd=project, env=env, capture_output=True,
                               text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert completed.returncode == 1, completed
    lines = completed.stderr.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("error: internal error (RuntimeError: planted \\x1b[31m failure\\x0asecond line)"), lines
    assert lines[1].startswith("hint: ") and "report" in lines[1] and "COMMANDCODE_DEBUG=1" in lines[1], lines
    debug = subprocess.run([sys.executable, "-c", NET_SCRIPT, *argv], cwd=project, env={**env, "COMMANDCODE_DEBUG": "1"},
                           capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "RuntimeError: planted" in debug.stderr, debug
