"""Sub-agent runs stored beside their session (issue #28, format §21): the writer's layout and
order, the reader, a run cut off by a kill, fork and clone copying them (and taking nothing
with them on a failure), and a sweep counting and removing them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from commandcode.sessions.clone import clone_files
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.fork import fork_files
from commandcode.sessions.reader import open_session
from commandcode.sessions.subagent_runs import list_subagent_runs, run_files, subagents_dir
from commandcode.sessions.subagent_writer import SubagentTranscript
from commandcode.workspace.parts import session_parts
from helpers.checkpoints import new_session_files
from helpers.cli import cli_env
from helpers.subagents import write_run
from helpers.trees import branched_session


def test_a_run_is_a_transcript_and_a_meta_in_the_sessions_folder(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    run = write_run(files, str(workdir), tool_use_id="t4", prompt="write b", reply="b written")
    folder = Path(subagents_dir(files))
    assert folder == files.directory / files.session_id / "subagents"
    assert sorted(path.name for path in folder.iterdir()) == [f"agent-{run.agent_id}.jsonl", f"agent-{run.agent_id}.meta.json"]
    assert run.agent_id.startswith("fg-1-") and len(run.agent_id) == len("fg-1-") + 8
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    lines = [json.loads(line) for line in (folder / f"agent-{run.agent_id}.jsonl").read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3 and lines[0]["id"] == f"agent-{run.agent_id}"
    assert [line["message"]["role"] for line in lines[1:]] == ["user", "assistant"]
    meta = json.loads((folder / f"agent-{run.agent_id}.meta.json").read_text())
    assert meta["agentId"] == run.agent_id and meta["toolUseId"] == "t4" and meta["status"] == "completed"
    assert meta["agentType"] == "general" and meta["startedAt"] <= meta["finishedAt"]
    found = list_subagent_runs(files, with_messages=True)
    assert found.warnings == [] and [r.agent_id for r in found.runs] == [run.agent_id]
    only = found.runs[0]
    assert (only.status, only.message_count, only.tool_use_id, only.source) == ("completed", 2, "t4", "commandcode")
    assert [m["content"][0]["text"] for m in only.messages] == ["write b", "b written"]
    assert found.by_tool_use() == {"t4": [only]}
    assert open_session(files.transcript).leaf_id == ids["a5"]  # the parent is untouched


def test_runs_are_listed_in_start_order_and_a_bad_meta_is_a_warning(home: Path, workdir: Path) -> None:
    files, _ = branched_session(workdir)
    first = write_run(files, str(workdir), tool_use_id="t2")
    second = write_run(files, str(workdir), tool_use_id="t4", background=True)
    assert second.agent_id.startswith("bg-")
    run_files(files, first.agent_id).meta.write_text("{not json")
    (Path(subagents_dir(files)) / "agent-..jsonl").write_text("")  # not a run id: ignored
    found = list_subagent_runs(files)
    assert {run.agent_id for run in found.runs} == {first.agent_id, second.agent_id}
    assert len(found.warnings) == 1 and found.warnings[0].startswith(f"sub-agent {first.agent_id}: no readable ")
    broken = next(run for run in found.runs if run.agent_id == first.agent_id)
    assert broken.tool_use_id is None and broken.message_count == 2  # its transcript is still the run
    assert next(run for run in found.runs if run.agent_id == second.agent_id).background


def test_a_run_is_running_while_written_and_interrupted_once_its_process_is_killed(home: Path, workdir: Path) -> None:
    files, _ = branched_session(workdir)
    script = textwrap.dedent(f"""
        import sys, time
        from commandcode.sessions.files import SessionFiles
        from commandcode.sessions.subagent_writer import SubagentTranscript
        files = SessionFiles({str(files.folder)!r}, {files.session_id!r})
        run = SubagentTranscript(files, {str(workdir)!r}, agent_type="explore", description="d", tool_use_id="t4")
        run.__enter__()
        run.writer.append_message({{"role": "user", "content": [{{"type": "text", "text": "go"}}]}})
        run.writer.append_message({{"role": "assistant", "content": [{{"type": "text", "text": "half"}}]}})
        run.writer.commit()
        print("committed", flush=True)
        time.sleep(120)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], env=cli_env(home), stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "committed"
        assert [run.status for run in list_subagent_runs(files).runs] == ["running"]
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    runs = list_subagent_runs(files, with_messages=True).runs
    assert [(run.status, run.message_count) for run in runs] == [("interrupted", 2)]


def test_a_run_that_raises_is_recorded_failed_with_what_it_committed(home: Path, workdir: Path) -> None:
    files, _ = branched_session(workdir)
    with pytest.raises(RuntimeError, match="provider went away"):
        with SubagentTranscript(files, str(workdir), agent_type="general", description="d", tool_use_id="t4") as run:
            run.writer.append_message({"role": "user", "content": [{"type": "text", "text": "go"}]})
            raise RuntimeError("provider went away")
    found = list_subagent_runs(files).runs
    assert [(r.status, r.message_count) for r in found] == [("failed", 1)]
    assert json.loads(run_files(files, found[0].agent_id).meta.read_text())["error"] == "provider went away"
    with pytest.raises(FileExistsError):  # never over an existing run
        with SubagentTranscript(files, str(workdir), agent_type="general", description="d", tool_use_id="t4",
                                agent_id=found[0].agent_id):
            pass


def test_fork_copies_every_run_and_clone_those_of_its_path(home: Path, workdir: Path) -> None:
    files, _ = branched_session(workdir)
    on_a = write_run(files, str(workdir), tool_use_id="t2", reply="from branch A")
    on_b = write_run(files, str(workdir), tool_use_id="t4", reply="from branch B")
    session = open_session(files.transcript)
    fork = fork_files(session, new_session_files(workdir)).files
    assert sorted(run.agent_id for run in list_subagent_runs(fork).runs) == sorted([on_a.agent_id, on_b.agent_id])
    for agent_id in (on_a.agent_id, on_b.agent_id):
        assert run_files(fork, agent_id).transcript.read_bytes() == run_files(files, agent_id).transcript.read_bytes()
    clone = clone_files(session, new_session_files(workdir)).files
    assert [run.agent_id for run in list_subagent_runs(clone).runs] == [on_b.agent_id]  # t2 is on branch A only
    assert [run.status for run in list_subagent_runs(files).runs] == ["completed", "completed"]  # the source's stay


def test_a_fork_that_cannot_copy_a_run_leaves_nothing_behind(home: Path, workdir: Path) -> None:
    files, _ = branched_session(workdir)
    run = write_run(files, str(workdir), tool_use_id="t4")
    transcript = run_files(files, run.agent_id).transcript
    saved = transcript.read_bytes()
    transcript.unlink()
    os.mkfifo(transcript)  # a run transcript that is no regular file: the copy is refused
    target = new_session_files(workdir)
    before = sorted(os.listdir(files.folder))
    with pytest.raises(OSError):
        fork_files(open_session(files.transcript), target)
    assert sorted(os.listdir(files.folder)) == before  # no transcript, meta or run folder of the fork
    assert not Path(target.folder, target.session_id).exists()
    transcript.unlink()
    transcript.write_bytes(saved)
    assert list_subagent_runs(files).runs[0].message_count == 2


def test_a_sessions_parts_include_its_runs(home: Path, workdir: Path) -> None:
    files, _ = branched_session(workdir)
    run = write_run(files, str(workdir), tool_use_id="t4")
    own = run_files(files, run.agent_id)
    parts = session_parts(files)
    assert parts[0] == files.transcript and own.transcript in parts and own.meta in parts


def test_no_session_no_runs(home: Path, workdir: Path) -> None:
    files = SessionFiles(str(workdir), "00000000-0000-4000-8000-000000000000")
    assert list_subagent_runs(files).runs == [] and list_subagent_runs(files).warnings == []
    with pytest.raises(ValueError, match="not a sub-agent id"):
        run_files(files, "../escape")


def test_reading_runs_writes_no_index_sidecar(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMANDCODE_INDEX", "on")
    files, _ = branched_session(workdir)
    write_run(files, str(workdir), tool_use_id="t4")
    assert len(list_subagent_runs(files, with_messages=True).runs) == 1
    assert not (home / "index" / "subagents").exists()


def test_run_numbers_count_per_session(home: Path, workdir: Path) -> None:
    first, _ = branched_session(workdir)
    second, _ = branched_session(workdir)
    ids = [write_run(files, str(workdir), tool_use_id="t4").agent_id for files in (first, second, first)]
    assert [agent_id.rsplit("-", 1)[0] for agent_id in ids] == ["fg-1", "fg-1", "fg-2"]
