"""The `commandcode` front end end to end: `-p` headless turns with the offline model, naming,
resuming and continuing, `--no-session`, the offline tools, and the `sessions` inspection
commands (ref §9). End-to-end cases run the real CLI in a subprocess against a private data
dir; typer's CliRunner is used only where a subprocess adds nothing (help, a spy on the model).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from commandcode.config.paths import project_dir
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.writer import SessionWriter
from commandcode.storage.ids import epoch_ms, new_uuid
from helpers.cli import (
    LISTING_FIELDS_REQUIRED,
    assert_error_lines,
    cli_env,
    entries,
    only_transcript,
    read_lines,
    read_meta_file,
    run_cli,
    run_json,
    run_ok,
    snapshot,
    transcripts,
)


def blocks(entry: dict[str, Any]) -> list[dict[str, Any]]:
    return entry["message"]["content"]


def texts(path: Path) -> list[tuple[str, str]]:
    """(role, first block's text or type) for every message entry of a transcript."""
    out = []
    for entry in entries(path):
        if entry["type"] != "message":
            continue
        first = blocks(entry)[0]
        out.append((entry["message"]["role"], first.get("text", first["type"])))
    return out


def tool_results(path: Path) -> list[str]:
    return [block["content"][0]["text"] for entry in entries(path) if entry["type"] == "message"
            for block in blocks(entry) if block["type"] == "tool_result"]


def session_id_of(path: Path) -> str:
    return path.name[: -len(".jsonl")]


def interactive_session(cwd: Path, prompt: str, *, name: str | None = None) -> SessionFiles:
    """A session as the interactive CLI leaves it (no `entrypoint` in meta), written in-process."""
    files = SessionFiles(project_dir(cwd), new_uuid())
    with SessionWriter(files, str(cwd)) as writer:
        if name:
            writer.append_entry("session_info", {"name": name})
        writer.append_message({"role": "user", "content": [{"type": "text", "text": prompt}],
                               "meta": {"source": "user", "createdAt": epoch_ms(), "messageId": new_uuid()}})
        writer.append_message({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                               "meta": {"source": "model", "createdAt": epoch_ms(), "messageId": new_uuid()}})
        writer.commit()
    return files


# --------------------------------------------------------------------------------------------
# -p


def test_print_text(home: Path, workdir: Path) -> None:
    completed = run_cli(["-p", "hello there\nsecond line"], workdir, home)
    assert completed.returncode == 0
    assert completed.stdout == "Offline model reply. You said: hello there\n"
    assert completed.stderr == ""
    transcript = only_transcript(home, workdir)
    header = read_lines(transcript)[0]
    assert header["cwd"] == str(workdir) and header["id"] == session_id_of(transcript)
    assert texts(transcript) == [("user", "hello there\nsecond line"),
                                 ("assistant", "Offline model reply. You said: hello there")]
    assistant = entries(transcript)[1]
    assert assistant["model"] == "commandcode/offline" and set(assistant["usage"]) >= \
        {"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"}
    meta = read_meta_file(transcript)
    assert list(meta) == ["entrypoint", "traceIds"] and meta["entrypoint"] == "print"
    assert len(meta["traceIds"]) == 1 and re.fullmatch(r"[0-9a-f]{32}", meta["traceIds"][0])
    assert (transcript.parent / (session_id_of(transcript) + ".checkpoints.jsonl")).exists()
    assert not (home / "history.jsonl").exists()  # -p never writes the prompt history (the real CLI's rule)
    # deterministic: the same prompt gets the same reply, in a new session
    again = run_cli(["-p", "hello there\nsecond line"], workdir, home)
    assert again.stdout == completed.stdout
    assert len(transcripts(home)) == 2


def test_print_text_is_verbatim(home: Path, workdir: Path) -> None:
    prompt = "[bold]not markup[/bold] :smile: " + "long " * 40 + "ünïcödé"
    completed = run_ok(["-p", prompt], workdir, home)
    assert completed.stdout == f"Offline model reply. You said: {prompt}\n"


def test_print_json(home: Path, workdir: Path) -> None:
    result = run_json(["-p", "hi", "--output-format", "json"], workdir, home)
    transcript = only_transcript(home, workdir)
    timings = {key: result.pop(key) for key in ("duration_ms", "duration_api_ms")}
    assert all(isinstance(value, int) and value >= 0 for value in timings.values())
    assert result == {"type": "result", "subtype": "success", "session_id": session_id_of(transcript),
                      "result": "Offline model reply. You said: hi", "is_error": False, "error": None,
                      "tool_calls": 0, "model": "commandcode/offline", "num_turns": 1, "total_cost_usd": 0.0,
                      "usage": {"input_tokens": result["usage"]["input_tokens"], "output_tokens": result["usage"]["output_tokens"],
                                "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}
    assert result["usage"]["input_tokens"] > 0 and result["usage"]["output_tokens"] > 0
    bad = run_cli(["-p", "hi", "--output-format", "xml"], workdir, home)
    assert_error_lines(bad, error_contains="xml", exit_code=2)


def test_blank_prompt_is_refused(home: Path, workdir: Path) -> None:
    for prompt in ("", "  \n "):
        assert_error_lines(run_cli(["-p", prompt], workdir, home), error_contains="the prompt is empty", exit_code=2)
    assert not home.exists()


def test_undecodable_prompt_bytes_become_replacement_characters(home: Path, workdir: Path) -> None:
    completed = subprocess.run([sys.executable, "-m", "commandcode", "-p", b"caf\xe9 \xff", "-n", b"N\xfeame"],
                               cwd=workdir, env=cli_env(home), capture_output=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.decode("utf-8") == "Offline model reply. You said: caf\ufffd \ufffd\n"  # as Node decodes argv
    transcript = only_transcript(home, workdir)
    assert b"\\udc" not in transcript.read_bytes()
    [listed] = run_json(["sessions", "list", "--all", "--json"], workdir, home)
    assert listed["first_message"] == "caf\ufffd \ufffd" and listed["name"] == "N\ufffdame"


def test_a_lone_surrogate_escape_is_readable(home: Path, workdir: Path) -> None:
    files = interactive_session(workdir, "cut \ud83d")
    assert b'"cut \\ud83d"' in files.transcript.read_bytes()  # written as JSON.stringify writes it
    context = run_json(["sessions", "context", files.session_id, "--json"], workdir, home)
    assert context["messages"][0]["content"][0]["text"] == "cut \ud83d"
    [listed] = run_json(["sessions", "list", "--json"], workdir, home)
    assert listed["first_message"] == "cut \ud83d"


def test_models(home: Path, workdir: Path) -> None:
    for model in ("offline", "commandcode/offline"):
        assert run_ok(["-p", "hi", "--model", model], workdir, home).stdout.startswith("Offline model reply")
    before = snapshot(home)
    nope = run_cli(["-p", "hi", "--model", "nope"], workdir, home)
    assert_error_lines(nope, error_contains="unknown model 'nope'", exit_code=2)
    assert nope.stdout == ""
    assert snapshot(home) == before


def test_name(home: Path, workdir: Path) -> None:
    run_ok(["-p", "named run", "-n", "  My\nSession  "], workdir, home)
    transcript = only_transcript(home, workdir)
    first, user, assistant = entries(transcript)
    assert first["type"] == "session_info" and first["parentId"] is None
    assert first["name"] == "My Session"  # CR/LF become spaces, then trimmed
    assert list(first) == ["type", "id", "parentId", "timestamp", "name"]
    assert user["parentId"] == first["id"] and assistant["parentId"] == user["id"]
    assert without_traces(read_meta_file(transcript)) == {"entrypoint": "print", "title": "My Session", "userRenamed": True}
    shown = run_json(["sessions", "show", "my session", "--json"], workdir, home)
    assert shown["name"] == "My Session" and shown["message_count"] == 2
    # a blank name is no name
    run_ok(["-p", "unnamed", "-n", "   "], workdir, home)
    unnamed = [path for path in transcripts(home) if path != transcript][0]
    assert entries(unnamed)[0]["type"] == "message"
    assert "title" not in read_meta_file(unnamed)


def test_rename_on_resume(home: Path, workdir: Path) -> None:
    run_ok(["-p", "first"], workdir, home)
    transcript = only_transcript(home, workdir)
    run_ok(["-p", "second", "-r", session_id_of(transcript), "-n", "Renamed Later"], workdir, home)
    rows = entries(transcript)
    assert [row["type"] for row in rows] == ["message", "message", "session_info", "message", "message"]
    assert rows[2]["parentId"] == rows[1]["id"]
    assert without_traces(read_meta_file(transcript)) == {"entrypoint": "print", "title": "Renamed Later", "userRenamed": True}
    assert run_json(["sessions", "show", "renamed later", "--json"], workdir, home)["name"] == "Renamed Later"


# --------------------------------------------------------------------------------------------
# -r, -c


def test_resume_by_id_prefix_and_name(home: Path, workdir: Path) -> None:
    run_ok(["-p", "turn one", "-n", "Resume Me"], workdir, home)
    transcript = only_transcript(home, workdir)
    session_id = session_id_of(transcript)
    for number, ref in enumerate([session_id, session_id[:8], "resume me", "  RESUME ME  "], start=2):
        result = run_json(["-p", f"turn {number}", "-r", ref, "--output-format", "json"], workdir, home)
        assert result["session_id"] == session_id
    assert len(transcripts(home)) == 1
    rows = [row for row in entries(transcript) if row["type"] == "message"]
    assert [blocks(row)[0]["text"] for row in rows if row["message"]["role"] == "user"] == \
        ["turn one", "turn 2", "turn 3", "turn 4", "turn 5"]
    # one chain: every entry is the child of the one before it, the resumed context continues
    chain = entries(transcript)
    assert all(later["parentId"] == earlier["id"] for earlier, later in zip(chain, chain[1:]))
    context = run_json(["sessions", "context", session_id, "--json"], workdir, home)
    assert len(context["messages"]) == 10
    assert read_meta_file(transcript)["entrypoint"] == "print"  # resuming does not re-label


def test_resume_from_another_directory_by_id(home: Path, workdir: Path, tmp_path: Path) -> None:
    run_ok(["-p", "here"], workdir, home)
    transcript = only_transcript(home, workdir)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run_ok(["-p", "from elsewhere", "-r", session_id_of(transcript)], elsewhere, home)
    assert transcripts(home) == [transcript]
    assert texts(transcript)[-2] == ("user", "from elsewhere")


def test_resume_refusals(home: Path, workdir: Path) -> None:
    interactive_session(workdir, "a", name="Twin")
    interactive_session(workdir, "b", name="twin ")
    before = snapshot(home)
    ambiguous = run_cli(["-p", "x", "-r", "TWIN"], workdir, home)
    assert_error_lines(ambiguous, error_contains="2 sessions are named 'TWIN'")
    assert snapshot(home) == before
    for files in (SessionFiles(project_dir(workdir), "abcd0001-0000-4000-8000-000000000000"),
                  SessionFiles(project_dir(workdir), "abcd0002-0000-4000-8000-000000000000")):
        files.transcript.write_bytes(next(iter(transcripts(home, workdir))).read_bytes())
    before = snapshot(home)
    prefix = run_cli(["-p", "x", "-r", "abcd"], workdir, home)
    assert_error_lines(prefix, error_contains="is a prefix of 2 session ids")
    missing = run_cli(["-p", "x", "-r", "no-such-session"], workdir, home)
    assert_error_lines(missing, error_contains="no session matches 'no-such-session'")
    both = run_cli(["-p", "x", "-r", "abcd0001", "-c"], workdir, home)
    assert both.returncode == 2 and both.stderr.startswith("error: ")  # a usage error
    assert snapshot(home) == before  # a refused resume writes nothing


def test_continue(home: Path, workdir: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = run_cli(["-p", "x", "-c"], empty, home)
    assert_error_lines(nothing, error_contains="no session to continue")
    run_ok(["-p", "session A", "-n", "A"], workdir, home)
    run_ok(["-p", "session B", "-n", "B"], workdir, home)
    by_name = {read_meta_file(path)["title"]: path for path in transcripts(home)}
    run_ok(["-p", "continues B", "-c"], workdir, home)
    assert texts(by_name["B"])[-2] == ("user", "continues B")
    run_ok(["-p", "resume A", "-r", "A"], workdir, home)
    run_ok(["-p", "continues A", "-c"], workdir, home)  # A is now the most recent
    assert texts(by_name["A"])[-2] == ("user", "continues A")
    assert len(transcripts(home)) == 2
    # -c stays in this directory's project
    other = run_cli(["-p", "x", "-c"], empty, home)
    assert other.returncode == 1
    # as the real CLI's `-p --continue`: the newest print session, even when an interactive one is newer
    newer_interactive = interactive_session(workdir, "interactive")
    run_ok(["-p", "continues A again", "-c"], workdir, home)
    assert texts(by_name["A"])[-2] == ("user", "continues A again")
    # with no print session here, the newest session of the directory
    lone = interactive_session(empty, "only interactive")
    run_ok(["-p", "continues the interactive one", "-c"], empty, home)
    assert texts(lone.transcript)[-2] == ("user", "continues the interactive one")
    assert texts(newer_interactive.transcript) == [("user", "interactive"), ("assistant", "ok")]


# --------------------------------------------------------------------------------------------
# --no-session


def test_no_session_writes_nothing(home: Path, workdir: Path) -> None:
    completed = run_cli(["-p", 'call write_file {"file_path": "made.txt", "content": "x"}', "--no-session",
                         "-n", "ghost", "--output-format", "json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result["session_id"] is None and result["tool_calls"] == 1
    assert (workdir / "made.txt").read_text() == "x"  # the tools still ran
    assert not home.exists()  # no transcript, meta, checkpoints, history, lock or folder


def test_no_session_resume_leaves_the_session_alone(home: Path, workdir: Path) -> None:
    run_ok(["-p", "kept"], workdir, home)
    transcript = only_transcript(home, workdir)
    before = snapshot(home)
    completed = run_ok(["-p", "not kept", "-r", session_id_of(transcript), "--no-session", "-n", "x"], workdir, home)
    assert completed.stdout == "Offline model reply. You said: not kept\n"
    assert snapshot(home) == before


def test_no_session_resume_still_gives_the_model_the_context(home: Path, workdir: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.agent.providers.offline import OfflineModel
    from commandcode.cli import app

    run_ok(["-p", "remember this"], workdir, home)
    session_id = session_id_of(only_transcript(home, workdir))
    seen: list[list[str]] = []
    respond = OfflineModel.respond

    def spy(self: OfflineModel, messages: list[dict[str, Any]], **options: Any) -> Any:
        seen.append([message["content"][0].get("text", "") for message in messages])
        return respond(self, messages, **options)

    monkeypatch.setattr(OfflineModel, "respond", spy)
    monkeypatch.chdir(workdir)
    result = CliRunner().invoke(app, ["-p", "what did I say?", "-r", session_id, "--no-session"])
    assert result.exit_code == 0, result.output
    assert seen == [["remember this", "Offline model reply. You said: remember this", "what did I say?"]]


def without_traces(meta: dict[str, Any]) -> dict[str, Any]:
    """A meta without its per-turn `traceIds` (random), after checking they are trace ids."""
    assert all(re.fullmatch(r"[0-9a-f]{32}", trace) for trace in meta.get("traceIds", []))
    return {key: value for key, value in meta.items() if key != "traceIds"}


def test_history_is_appended_whole(home: Path, workdir: Path) -> None:
    from commandcode.sessions.history import record_prompt

    home.mkdir(parents=True)
    history = home / "history.jsonl"
    history.write_bytes(b'{"p":"older","t":1}\n{"p":"tor')
    run_ok(["-p", "not recorded: -p never writes the history"], workdir, home)
    record_prompt("newer")  # as the interactive shell records it
    record_prompt("newer")  # a consecutive duplicate is not recorded again
    raw = history.read_bytes()
    assert raw.startswith(b'{"p":"older","t":1}\n{"p":"tor\n')
    assert raw.endswith(b"\n")
    assert [json.loads(line)["p"] for line in raw.split(b"\n")[2:-1]] == ["newer"]


# --------------------------------------------------------------------------------------------
# The offline tools


def test_write_read_edit_with_relative_and_absolute_paths(home: Path, workdir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "abs.txt"
    prompt = "\n".join([
        "Please do these:",
        'call write_file {"file_path": "sub/rel.txt", "content": "alpha\\nbeta\\n"}',
        f'call write_file {{"file_path": "{outside}", "content": "one\\n"}}',
        'call read_file {"file_path": "sub/rel.txt"}',
        'call edit_file {"file_path": "sub/rel.txt", "old_string": "beta", "new_string": "gamma"}',
        f'call edit_file {{"file_path": "{outside}", "old_string": "one", "new_string": "two"}}',
        f'call read_file {{"file_path": "{outside}"}}',
        'call write_file {"file_path": "sub/rel.txt", "content": "replaced\\n"}',
    ])
    completed = run_ok(["-p", prompt, "--output-format", "json", "--yolo"], workdir, home)  # outside the cwd: allowed
    result = json.loads(completed.stdout)
    assert result["tool_calls"] == 7 and result["is_error"] is False
    relative = workdir / "sub" / "rel.txt"
    assert relative.read_text() == "replaced\n" and outside.read_text() == "two\n"
    transcript = only_transcript(home, workdir)
    assert tool_results(transcript) == [
        f"File created successfully at: {relative}",
        f"File created successfully at: {outside}",
        "Read 1/1 file, 2 lines\n1: alpha\n2: beta",
        f"The file {relative} has been updated successfully.",
        f"The file {outside} has been updated successfully.",
        "Read 1/1 file, 1 line\n1: two",
        f"The file {relative} has been updated successfully.",
    ]
    assert result["result"] == "\n".join([
        "Ran 7 tool call(s):",
        f"- write_file: File created successfully at: {relative}",
        f"- write_file: File created successfully at: {outside}",
        "- read_file: Read 1/1 file, 2 lines",
        f"- edit_file: The file {relative} has been updated successfully.",
        f"- edit_file: The file {outside} has been updated successfully.",
        "- read_file: Read 1/1 file, 1 line",
        f"- write_file: The file {relative} has been updated successfully.",
    ])
    # the real CLI's shape: one assistant entry per model call, each tool_use answered by the next entry
    rows = [row for row in entries(transcript) if row["type"] == "message"]
    assert [row["message"]["role"] for row in rows] == ["user"] + ["assistant", "user"] * 7 + ["assistant"]
    uses = [blocks(row)[0] for row in rows if blocks(row)[0]["type"] == "tool_use"]
    answers = [blocks(row)[0] for row in rows if blocks(row)[0]["type"] == "tool_result"]
    assert [use["id"] for use in uses] == [answer["tool_use_id"] for answer in answers]
    assert len({use["id"] for use in uses}) == 7
    assert [use["name"] for use in uses] == ["write_file", "write_file", "read_file", "edit_file", "edit_file",
                                              "read_file", "write_file"]
    assert uses[0]["input"] == {"file_path": "sub/rel.txt", "content": "alpha\nbeta\n"}  # the input as given
    assert uses[3]["input"] == {"file_path": "sub/rel.txt", "old_string": "beta", "new_string": "gamma"}
    for row in rows:
        if blocks(row)[0]["type"] == "tool_result":
            assert row["message"]["meta"]["source"] == "tool" and "createdAt" not in row["message"]["meta"]
    # a later turn sees the tools' output in its context
    context = run_json(["sessions", "context", session_id_of(transcript), "--json"], workdir, home)
    assert len(context["messages"]) == 16


def test_edit_file_errors(home: Path, workdir: Path) -> None:
    (workdir / "twice.txt").write_text("x x\n")
    prompt = "\n".join([
        'call edit_file {"file_path": "twice.txt", "old_string": "x", "new_string": "y"}',
        'call edit_file {"file_path": "twice.txt", "old_string": "zzz", "new_string": "y"}',
        'call edit_file {"file_path": "missing.txt", "old_string": "a", "new_string": "b"}',
        'call edit_file {"file_path": "twice.txt", "old_string": "x", "new_string": "y", "replace_all": true}',
        'call read_file {"file_path": "missing.txt"}',
        'call read_file {}',
        'call nope {"a": 1}',
    ])
    run_ok(["-p", prompt], workdir, home)
    results = tool_results(only_transcript(home, workdir))
    assert results[0] == f"Error: old_string occurs 2 times in {workdir / 'twice.txt'}; pass replace_all or more context"
    assert results[1] == f"Error: old_string not found in {workdir / 'twice.txt'}"
    assert results[2].startswith("Error: No such file or directory") and "missing.txt" in results[2]
    assert results[3] == f"The file {workdir / 'twice.txt'} has been updated successfully."
    assert results[4].startswith("Error: No such file or directory")
    assert results[5] == "Error: read_file needs a `file_path`"
    assert results[6] == "Error: unknown tool 'nope'"
    assert (workdir / "twice.txt").read_text() == "y y\n"


def test_bash(home: Path, workdir: Path) -> None:
    prompt = "\n".join([
        'call bash {"command": "echo hello; pwd"}',
        'call bash {"command": "echo out; echo err >&2; exit 3"}',
        'call bash {"command": "true"}',
    ])
    result = run_json(["-p", prompt, "--output-format", "json", "--yolo"], workdir, home)
    assert result["tool_calls"] == 3
    assert tool_results(only_transcript(home, workdir)) == [f"hello\n{workdir}", "out\nerr\nExit code 3", "(no output)"]


@pytest.mark.parametrize("prompt, reason", [
    ('call write_file {"file_path": "a.txt", "content": }', "is not valid JSON"),
    ('call write_file {"file_path": "a.txt"', "is not valid JSON"),
    ('call read_file ["a.txt"]', "must be a JSON object"),
    ('call bash {"command": "echo", "timeout": NaN}', "is not valid JSON"),
    ('fine line\ncall bash {"command": "echo ok"}\ncall bash {oops}', "line 3 of the prompt"),
])
def test_a_bad_call_line_gets_a_clear_reply(home: Path, workdir: Path, prompt: str, reason: str) -> None:
    result = run_json(["-p", prompt, "--output-format", "json"], workdir, home)
    assert result["result"].startswith("I could not run the tools you asked for: line ")
    assert reason in result["result"]
    assert result["tool_calls"] == 0 and result["is_error"] is False
    assert not (workdir / "a.txt").exists()
    transcript = only_transcript(home, workdir)
    assert [role for role, _ in texts(transcript)] == ["user", "assistant"]


def test_tool_failures_never_crash_the_turn(home: Path, workdir: Path) -> None:
    (workdir / "binary.dat").write_bytes(b"\xff\xfe\x00binary")
    prompt = "\n".join([
        'call edit_file {"file_path": "binary.dat", "old_string": "a", "new_string": "b"}',
        'call bash {"command": "echo \\u0000"}',
        'call write_file {"file_path": "bad\\u0000name", "content": "x"}',
        'call read_file {"file_path": "~no-such-user-here/x"}',
        f'call read_file {{"file_path": "{workdir}"}}',
    ])
    completed = run_cli(["-p", prompt, "--output-format", "json", "--yolo"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["tool_calls"] == 5
    results = tool_results(only_transcript(home, workdir))
    assert all(text.startswith("Error: ") for text in results), results
    assert (workdir / "binary.dat").read_bytes() == b"\xff\xfe\x00binary"


# --------------------------------------------------------------------------------------------
# sessions list / show / context / tree


def test_listing_fields_and_filters(home: Path, workdir: Path, tmp_path: Path) -> None:
    git = shutil.which("git")
    if git:
        subprocess.run([git, "init", "-q", "-b", "feature/x", str(workdir)], check=True, capture_output=True)
    run_ok(["-p", "headless one", "-n", "Headless"], workdir, home)
    interactive = interactive_session(workdir, "interactive prompt")
    other_cwd = tmp_path / "other"
    other_cwd.mkdir()
    other = interactive_session(other_cwd, "other project")
    run_ok(["-p", "other headless"], other_cwd, home)

    default = run_json(["sessions", "list", "--json"], workdir, home)
    # a named -p session has the title the seed hides headless runs for lacking (issue 31)
    assert [item["name"] for item in default] == [None, "Headless"]
    assert default[0]["id"] == interactive.session_id
    everything_here = run_json(["sessions", "list", "--all", "--json"], workdir, home)
    assert [item["name"] for item in everything_here] == [None, "Headless"]  # newest first
    headless = everything_here[1]
    assert set(headless) >= LISTING_FIELDS_REQUIRED
    transcript = Path(headless["path"])
    assert transcript.parent == project_dir(workdir) and headless["id"] == session_id_of(transcript)
    assert headless["entrypoint"] == "print" and headless["message_count"] == 2
    assert headless["first_message"] == "headless one" and headless["parent_session_id"] is None
    assert headless["git_branch"] == ("feature/x" if git else None)
    assert headless["created"] <= headless["modified"]
    assert everything_here[0]["entrypoint"] is None and everything_here[0]["git_branch"] is None
    projects = run_json(["sessions", "list", "--all-projects", "--json"], workdir, home)
    assert {item["id"] for item in projects} == {interactive.session_id, other.session_id, headless["id"]}
    every = run_json(["sessions", "list", "--all", "--all-projects", "--json"], workdir, home)
    assert len(every) == 4
    modified = [item["modified"] for item in every]
    assert modified == sorted(modified, reverse=True)
    table = run_ok(["sessions", "list", "--all"], workdir, home).stdout
    assert headless["id"][:8] in table and "Headless" in table and "headless one" in table
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_json(["sessions", "list", "--json"], empty, home) == []


def test_show_context_tree_shapes(home: Path, workdir: Path) -> None:
    run_ok(["-p", 'call bash {"command": "echo hi"}', "-n", "Shapes", "--yolo"], workdir, home)
    transcript = only_transcript(home, workdir)
    stored = entries(transcript)
    shown = run_json(["sessions", "show", "shapes", "--json"], workdir, home)
    assert {"id", "path", "cwd", "name", "created", "modified", "message_count", "leaf", "model", "effort",
            "parent_session_id", "skipped_lines"} <= set(shown)
    assert shown["id"] == session_id_of(transcript) and shown["path"] == str(transcript)
    assert shown["cwd"] == str(workdir) and shown["name"] == "Shapes" and shown["message_count"] == 4
    assert shown["leaf"] == stored[-1]["id"] and shown["model"] == "commandcode/offline" and shown["effort"] is None
    assert shown["parent_session_id"] is None and shown["skipped_lines"] == []

    context = run_json(["sessions", "context", "shapes", "--json"], workdir, home)
    assert set(context) >= {"leaf", "entry_ids", "messages"}
    assert context["leaf"] == shown["leaf"]
    assert context["entry_ids"] == [entry["id"] for entry in stored if entry["type"] == "message"]
    assert [message["role"] for message in context["messages"]] == ["user", "assistant", "user", "assistant"]
    assert context["messages"] == [entry["message"] for entry in stored if entry["type"] == "message"]

    tree = run_json(["sessions", "tree", "shapes", "--json"], workdir, home)
    assert tree["leaf"] == shown["leaf"]
    assert [(row["id"], row["parent_id"], row["type"], row["timestamp"]) for row in tree["entries"]] == \
        [(entry["id"], entry["parentId"], entry["type"], entry["timestamp"]) for entry in stored]
    assert all(row["on_active_path"] and row["label"] is None for row in tree["entries"])
    assert all({"id", "parent_id", "type", "timestamp", "label", "on_active_path"} <= set(row) for row in tree["entries"])


def test_tree_with_a_branch_and_a_label(home: Path, workdir: Path) -> None:
    files = interactive_session(workdir, "root prompt")
    with SessionWriter(files, str(workdir)) as writer:
        first_user = [entry["id"] for entry in entries(files.transcript)][0]
        side = writer.append_entry("custom", {"customType": "x"})  # a branch off the old leaf
        writer.append_entry("label", {"targetId": first_user, "label": "start"}, parent_id=first_user)
        writer.commit()
    tree = run_json(["sessions", "tree", files.session_id, "--json"], workdir, home)
    rows = {row["id"]: row for row in tree["entries"]}
    assert rows[first_user]["label"] == "start"
    assert rows[side]["on_active_path"] is False  # the label line is the leaf; its branch is active
    assert rows[first_user]["on_active_path"] is True
    assert tree["leaf"] == tree["entries"][-1]["id"]


def test_show_reports_skipped_lines(home: Path, workdir: Path) -> None:
    run_ok(["-p", "x"], workdir, home)
    transcript = only_transcript(home, workdir)
    good = transcript.read_bytes()
    lines = good.split(b"\n")
    transcript.write_bytes(b"\n".join([lines[0], b"not json at all", *lines[1:]]))
    shown = run_json(["sessions", "show", session_id_of(transcript), "--json"], workdir, home)
    [skipped] = shown["skipped_lines"]
    assert {"line", "offset", "reason"} <= set(skipped)
    assert (skipped["line"], skipped["offset"]) == (2, len(lines[0]) + 1)
    assert shown["message_count"] == 2
    text = run_cli(["sessions", "show", session_id_of(transcript)], workdir, home)
    assert text.returncode == 0 and "warning:" in text.stderr and "line 2" in text.stderr


@pytest.mark.parametrize("command", ["show", "context", "tree"])
def test_unknown_reference(home: Path, workdir: Path, command: str) -> None:
    run_ok(["-p", "x"], workdir, home)
    for as_json in ([], ["--json"]):
        completed = run_cli(["sessions", command, "nothing-like-this", *as_json], workdir, home)
        assert_error_lines(completed, error_contains="no session matches 'nothing-like-this'")
        assert completed.stdout == ""


def test_a_sidecar_path_is_not_a_session(home: Path, workdir: Path) -> None:
    run_ok(["-p", "x"], workdir, home)
    files = SessionFiles.for_transcript(only_transcript(home, workdir))
    for command in (["sessions", "show", str(files.checkpoints)], ["-p", "y", "-r", str(files.checkpoints)]):
        assert_error_lines(run_cli(command, workdir, home), error_contains="is a session sidecar, not a transcript")
    assert run_json(["sessions", "show", str(files.transcript), "--json"], workdir, home)["id"] == files.session_id


def test_help_and_version() -> None:
    from commandcode.cli import app

    runner = CliRunner()
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.stdout.startswith("commandcode ")
    bare = runner.invoke(app, [])  # the interactive shell, which needs a terminal
    assert bare.exit_code == 2 and "the interactive shell needs a terminal" in bare.output
    mixed = runner.invoke(app, ["-p", "x", "sessions", "list"])
    assert mixed.exit_code == 2  # a usage error



def test_show_is_human_without_json(home: Path, workdir: Path) -> None:
    """`sessions show` prints values as a person reads them (`--json` is the data): no Python
    `None`, dict or list reprs."""
    run_ok(["-p", "x"], workdir, home)
    sid = session_id_of(only_transcript(home, workdir))
    text = run_ok(["sessions", "show", sid], workdir, home).stdout
    lines = dict(line.split(": ", 1) for line in text.splitlines())
    assert lines["parent_session_id"] == "—" and lines["name"] == "—" and lines["anomalies"] == "none"
    assert re.fullmatch(r"[0-9a-f]{32}", lines["trace_ids"]), lines["trace_ids"]
    assert not re.search(r"None|\{|\[|'", text), text
    data = run_json(["sessions", "show", sid, "--json"], workdir, home)
    assert data["parent_session_id"] is None and data["anomalies"]["cycle_detected"] is False


def test_context_stats_is_human_and_json_with_json(home: Path, workdir: Path) -> None:
    """`sessions context --stats` prints labelled lines with the context's token count; with
    `--json` it is one JSON line (what the open benchmarks read)."""
    run_ok(["-p", "x"], workdir, home)
    sid = session_id_of(only_transcript(home, workdir))
    text = run_ok(["sessions", "context", sid, "--stats"], workdir, home).stdout
    lines = dict(line.split(": ", 1) for line in text.splitlines())
    assert lines["context messages"] == "2" and lines["entries"] == "2" and lines["skipped lines"] == "0"
    status = run_json(["sessions", "status", sid, "--json"], workdir, home)
    assert int(lines["context tokens"].replace(",", "")) == status["context_tokens"] > 0
    data = json.loads(run_ok(["sessions", "context", sid, "--stats", "--json"], workdir, home).stdout)
    assert data["context_messages"] == 2 and data["entries"] == 2 and data["skipped_lines"] == 0
