"""Every backup both programs can use (issue 32): the real Command Code CLI 1.64.0 and
commandcode on one data dir, driven as a user switching between them would (its `/rewind` in its
TUI, in tmux, offline). Each of the issue's five cases, which broke on 55fdfa8:

1. a `bash` turn of ours (shell tracking) blocked every real-CLI code rewind at or before it;
2. after our redo, the real CLI could not restore the checkpoints it brought back (its resume
   had deleted their blobs: our hidden lines are ones it cannot parse);
3. the same cleanup broke our own rewind to a real-CLI checkpoint we had hidden;
4. an imported Claude Code compaction (attachments between boundary and summary) reached the
   real CLI with an empty summary, twice;
5. a tool call without a result was sent as is (the real CLI sends a synthetic result).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helpers.cli import run_cli, run_ok
from helpers.npm_programs import Programs, run_offline
from helpers.real_cli import PROVIDERS, RealCli, our_context, ours_offline, same_context, sent_context, shared_home
from helpers.two_programs import (
    bash_call,
    our_turn,
    ours_can_restore,
    real_can_restore,
    real_code_rewind,
    real_resume,
    real_turn,
    tree,
    write_call,
)

pytestmark = [pytest.mark.npm, pytest.mark.slow, pytest.mark.terminal]


@pytest.fixture
def shared(npm_programs: Programs, tmp_path: Path) -> tuple[RealCli, Path, Path]:
    return shared_home(npm_programs, tmp_path)


def _session(data: Path) -> str:
    [path] = [path for path in (data / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name]
    return path.stem


def _three_turns(cwd: Path, data: Path, second: str) -> str:
    """Three turns of ours: a.txt "one", `second` "two" (a.txt or another file), a.txt "three"."""
    our_turn(cwd, data, "turn one", write_call("a.txt", "one\n"))
    session = _session(data)
    our_turn(cwd, data, "turn two", write_call(second, "two\n"), session=session)
    our_turn(cwd, data, "turn three", write_call("a.txt", "three\n"), session=session)
    return session


def test_1_the_real_cli_restores_past_a_bash_turn_of_ours(shared: tuple[RealCli, Path, Path], tmp_path: Path) -> None:
    real, cwd, data = shared
    (cwd / "b.txt").write_text("bee\n")
    (cwd / "sub").mkdir()
    (cwd / "sub" / "k.txt").write_text("kay\n")
    start = tree(cwd)
    our_turn(cwd, data, "turn one", write_call("a.txt", "one\n"))
    session = _session(data)
    our_turn(cwd, data, "turn two", bash_call("rm a.txt && echo new > c.txt && sed -i s/bee/BEE/ b.txt && "
                                              "mv sub/k.txt sub/k2.txt"), session=session)
    assert tree(cwd) == {"b.txt": "BEE\n", "c.txt": "new\n", "sub/k2.txt": "kay\n"}
    assert real_can_restore(data, session) == []
    [two, one] = real_code_rewind(real, cwd, session, tmp_path, "turn two", "turn one")
    assert "Restore verification failed" not in two and "Restored to checkpoint" in two
    assert "Restore verification failed" not in one and "Restored to checkpoint" in one
    assert tree(cwd) == start


def test_2_after_our_redo_the_real_cli_restores_what_it_brought_back(shared: tuple[RealCli, Path, Path],
                                                                    tmp_path: Path) -> None:
    real, cwd, data = shared
    session = _three_turns(cwd, data, "a.txt")
    run_ok(["rewind", session, "--to", "2", "--mode", "both", "--yes"], cwd, data)
    assert (cwd / "a.txt").read_text() == "one\n"
    real_resume(real, cwd, session, tmp_path)  # its cleanup runs
    run_ok(["rewind", session, "--redo", "--yes"], cwd, data)
    assert (cwd / "a.txt").read_text() == "three\n"
    assert real_can_restore(data, session) == []
    [screen] = real_code_rewind(real, cwd, session, tmp_path, "turn two")
    assert "Restore verification failed" not in screen and "Restored to checkpoint" in screen
    assert (cwd / "a.txt").read_text() == "one\n"


def test_3_our_rewind_to_a_real_cli_checkpoint_we_hid_survives_its_cleanup(shared: tuple[RealCli, Path, Path],
                                                                         tmp_path: Path) -> None:
    real, cwd, data = shared
    session = _three_turns(cwd, data, "b.txt")
    real_turn(real, session, "real turn four", (cwd / "b.txt", "BEE by the real cli\n"))
    run_ok(["rewind", session, "--to", "2", "--mode", "both", "--yes"], cwd, data)
    assert not (cwd / "b.txt").exists()
    real_resume(real, cwd, session, tmp_path)  # its cleanup runs
    done = run_cli(["rewind", session, "--to", "4", "--mode", "code", "--yes"], cwd, data)
    assert done.returncode == 0, done.stderr
    assert tree(cwd) == {"a.txt": "three\n", "b.txt": "two\n"}
    assert ours_can_restore(cwd, data, session) == []


def test_4_an_imported_reactive_compaction_reaches_the_real_cli_once_and_whole(npm_programs: Programs,
                                                                             tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    cwd.mkdir()
    real = RealCli(npm_programs, tmp_path / "home", cwd)
    claude = tmp_path / "claude"
    sid = "0b5e5e1e-0000-4000-8000-000000000032"
    project = claude / "projects" / str(cwd).replace("/", "-")
    project.mkdir(parents=True)

    def entry(kind: str, uuid: str, parent: str | None, **fields: object) -> dict[str, object]:
        return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": sid, "cwd": str(cwd),
                "version": "2.1.332", "isSidechain": False, "timestamp": "2026-01-02T03:04:05.000Z", **fields}

    lines = [entry("user", "u1", None, message={"role": "user", "content": "before the compaction"}),
             entry("assistant", "a1", "u1", message={"id": "m1", "role": "assistant", "model": "claude-x",
                                                    "content": [{"type": "text", "text": "reply one"}]}),
             entry("system", "b1", None, subtype="compact_boundary", logicalParentUuid="a1",
                   compactMetadata={"trigger": "auto", "preTokens": 1234}),
             entry("attachment", "t1", "b1", attachment={"type": "file", "filename": "x.py"}),
             entry("attachment", "t2", "t1", attachment={"type": "file", "filename": "y.py"}),
             entry("user", "s1", "t2", isCompactSummary=True,
                   message={"role": "user", "content": "THE SUMMARY of the earlier turns"}),
             entry("user", "u2", "s1", message={"role": "user", "content": "after the compaction"}),
             entry("assistant", "a2", "u2", message={"id": "m2", "role": "assistant", "model": "claude-x",
                                                    "content": [{"type": "text", "text": "reply two"}]})]
    transcript = project / f"{sid}.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = run_cli(["import", "claude", str(transcript), "--json"], cwd, real.data, CLAUDE_CONFIG_DIR=str(claude))
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout)["id"]
    [imported] = list((real.data / "projects").glob(f"*/{session}.jsonl"))
    compactions = [json.loads(line) for line in imported.read_text().splitlines() if '"type":"compaction"' in line]
    assert len(compactions) == 1 and compactions[0]["summary"] == "THE SUMMARY of the earlier turns"
    ours = our_context(session, cwd, real.data)
    sent = sent_context(real("-r", session, "-p", "after the import"))
    assert "THE SUMMARY of the earlier turns" in sent[0][1]
    assert sum("THE SUMMARY" in text for _, text in sent) == 1
    same_context(ours, sent)


def test_5_a_tool_call_without_a_result_gets_the_real_clis_synthetic_answer(shared: tuple[RealCli, Path, Path],
                                                                           tmp_path: Path) -> None:
    real, cwd, data = shared
    (cwd / "x.txt").write_text("ex\n")
    run_ok(["-p", "first turn"], cwd, data)
    session = _session(data)
    our_turn(cwd, data, "read it", ("read_file", {"file_path": "x.txt"}), session=session)
    [transcript] = list((data / "projects").glob(f"*/{session}.jsonl"))
    lines = transcript.read_text().splitlines(keepends=True)
    kinds = [(json.loads(line).get("message") or {}).get("role") for line in lines]
    assert kinds[-3:] == ["assistant", "user", "assistant"]  # the call, its result, the reply
    transcript.write_text("".join(lines[:-2]))  # interrupted after the call: no result, no reply
    call_id = json.loads(lines[-3])["message"]["content"][-1]["id"]
    ours = our_context(session, cwd, data)
    assert ("tool_result", "") in ours
    context = json.loads(run_ok(["sessions", "context", session, "--json"], cwd, data).stdout)
    synthetic = [block for message in context["messages"] for block in message["content"]
                 if block.get("type") == "tool_result"]
    assert synthetic == [{"type": "tool_result", "tool_use_id": call_id, "content": [
        {"type": "text", "text": "No result \u2014 the tool call did not complete (interrupted or lost)."}]}]
    theirs = real("-r", session, "-p", "second turn")
    same_context(ours, sent_context(theirs))
    theirs_body = next(request["body"] for request in theirs.requests if request["path"].endswith("/chat/completions"))
    their_result = next(message for message in theirs_body["messages"] if message["role"] == "tool")
    # what we send: the same repaired call, to a strict OpenAI-compatible server (the stub)
    ours_run = ours_offline(real, cwd, tmp_path / "ours.jsonl", "-r", session, "-p", "third turn")
    body = next(request["body"] for request in ours_run.requests if request["path"].endswith("/chat/completions"))
    roles = [message["role"] for message in body["messages"]]
    position = next(index for index, message in enumerate(body["messages"])
                    if any(call["id"] == call_id for call in message.get("tool_calls") or []))
    assert roles[position + 1] == "tool" and body["messages"][position + 1] == their_result
