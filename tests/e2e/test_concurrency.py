"""Concurrent writers and readers of one session, through real processes.

- A second writer is refused at once with one clear line naming the holder's pid (library and CLI),
  and racing CLI turns each either commit whole or are refused that way.
- Stress: racing processes append 10,000 entries to one transcript, each round taking the writer
  lock; every line is then one whole JSON object, ids are unique, every entry's parent is the line
  before it (no interleaving, no lost update) and each worker's entries are all there in order.
- A reader scanning while a writer appends always sees a prefix of the final history.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from commandcode.config.paths import project_dir
from commandcode.errors import SessionLockedError
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.writer import SessionWriter
from helpers import crash_harness as harness
from helpers.cli import cli_env, hold_writer, stop
from helpers.locations import SUPPORT

WORKERS = 8
ENTRIES_PER_WORKER = 1250  # 10,000 in all


def _env(index: bool = False) -> dict[str, str]:
    env = dict(os.environ)
    env.update(harness.python_path_env())
    env["COMMANDCODE_INDEX"] = "on" if index else "off"
    return env


def _new_session(cwd: Path, turns: int = 1) -> SessionFiles:
    files = SessionFiles(project_dir(cwd), str(uuid.uuid4()))
    with SessionWriter(files, str(cwd)) as writer:
        for turn in range(turns):
            writer.append_message({"role": "user", "content": [{"type": "text", "text": f"seed {turn}"}],
                                   "meta": {"messageId": str(uuid.uuid4())}})
            writer.append_message({"role": "assistant", "content": [{"type": "text", "text": f"reply {turn}"}],
                                   "meta": {"messageId": str(uuid.uuid4())}})
        writer.commit()
    return files


def _lines(transcript: Path) -> list[dict]:
    data = transcript.read_bytes()
    assert data.endswith(b"\n")
    records = []
    for number, line in enumerate(data.split(b"\n")[:-1], start=1):
        value = json.loads(line)  # every line is one whole JSON object: nothing interleaved or glued
        assert isinstance(value, dict), number
        records.append(value)
    return records


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    folder = (tmp_path / "project").resolve()
    folder.mkdir()
    return folder


# --------------------------------------------------------------------------------------------
# Two writers


def test_a_second_writer_is_refused_naming_the_holder(home: Path, cwd: Path) -> None:
    files = _new_session(cwd)
    before = files.transcript.read_bytes()
    holder = hold_writer(files.transcript, cwd, home)
    try:
        with pytest.raises(SessionLockedError) as raised, SessionWriter(files, str(cwd)):
            pass
        assert raised.value.holder_pid == holder.pid
        assert f"process {holder.pid}" in str(raised.value)
        completed = subprocess.run([sys.executable, "-m", "commandcode", "-p", "second writer", "-r", files.session_id],
                                   cwd=cwd, env=cli_env(home), capture_output=True, text=True, timeout=120)
        assert completed.returncode == 1
        lines = completed.stderr.splitlines()
        assert lines[0] == f"error: session {files.transcript.name} is open for writing by process {holder.pid}", lines
        assert len(lines) == 2 and lines[1].startswith("hint: "), lines
        assert completed.stdout == ""
    finally:
        stop(holder)
    assert files.transcript.read_bytes() == before


def test_racing_cli_turns_each_commit_whole_or_are_refused_clearly(home: Path, cwd: Path) -> None:
    files = _new_session(cwd)
    committed: list[str] = []
    refused = 0
    for round_number in range(6):
        markers = [f"race-{round_number}-{side}-{uuid.uuid4().hex[:8]}" for side in range(3)]
        processes = [subprocess.Popen([sys.executable, "-m", "commandcode", "-p", marker, "-r", files.session_id,
                                       "--output-format", "json"], cwd=cwd, env=cli_env(home),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for marker in markers]
        for marker, process in zip(markers, processes):
            out, err = process.communicate(timeout=120)
            if process.returncode == 0:
                assert json.loads(out)["session_id"] == files.session_id
                committed.append(marker)
            else:
                refused += 1
                lines = err.splitlines()
                assert process.returncode == 1 and len(lines) == 2, err
                assert lines[0].startswith(f"error: session {files.transcript.name} is open for writing by process "), err
    records = _lines(files.transcript)[1:]
    users = [record["message"]["content"][0]["text"] for record in records
             if record["message"]["role"] == "user" and record["message"]["content"][0]["text"].startswith("race-")]
    assert sorted(users) == sorted(committed)  # every committed turn is there once, nothing else
    for previous, record in zip(records, records[1:]):
        assert record["parentId"] == previous["id"]
    assert committed, "at least one racing turn must win"


# --------------------------------------------------------------------------------------------
# Stress: 10,000 appends from racing processes


@pytest.mark.slow
@pytest.mark.home_on_tmpfs  # fsync is free there: the test is about interleaving, not the disk
@pytest.mark.parametrize("index", [False, pytest.param(True, marks=pytest.mark.skipif(
    not harness.index_supported(), reason="_native.scan_session takes no index path yet (index sidecars)"))])
def test_ten_thousand_racing_appends_stay_whole_and_chained(home: Path, cwd: Path, index: bool) -> None:
    files = _new_session(cwd)
    seed_entries = len(_lines(files.transcript)) - 1
    workers = [subprocess.Popen([sys.executable, str(SUPPORT / "stress_writer.py"), str(files.transcript), str(cwd),
                                 str(worker), str(ENTRIES_PER_WORKER), "7"], cwd=cwd, env=_env(index),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for worker in range(WORKERS)]
    reports = []
    for process in workers:
        out, err = process.communicate(timeout=1200)
        assert process.returncode == 0, err
        reports.append(json.loads(out))
    assert sum(report["committed"] for report in reports) == WORKERS * ENTRIES_PER_WORKER
    assert sum(report["refused"] for report in reports) > 0, "the writers never raced"
    assert all(report["holders_named"] == report["refused"] for report in reports), reports

    records = _lines(files.transcript)
    header, entries = records[0], records[1:]
    assert header["type"] == "session"
    assert len(entries) == seed_entries + WORKERS * ENTRIES_PER_WORKER
    ids = [entry["id"] for entry in entries]
    assert len(set(ids)) == len(ids), "entry ids must be unique"
    assert entries[0]["parentId"] is None
    for previous, entry in zip(entries, entries[1:]):
        assert entry["parentId"] == previous["id"], "every append continues from the last committed entry"
    seen: dict[int, list[int]] = {}
    for entry in entries[seed_entries:]:
        worker, sequence = entry["message"]["content"][0]["text"][1:].split("-")
        seen.setdefault(int(worker), []).append(int(sequence))
    assert seen == {worker: list(range(ENTRIES_PER_WORKER)) for worker in range(WORKERS)}


# --------------------------------------------------------------------------------------------
# Reading while another process writes


@pytest.mark.parametrize("index", [False, pytest.param(True, marks=pytest.mark.skipif(
    not harness.index_supported(), reason="_native.scan_session takes no index path yet (index sidecars)"))])
def test_a_reader_always_sees_a_prefix_of_the_committed_history(home: Path, cwd: Path, tmp_path: Path,
                                                                index: bool) -> None:
    files = _new_session(cwd)
    stop_file, out_file = tmp_path / "stop", tmp_path / "scans.json"
    readers = [subprocess.Popen([sys.executable, str(SUPPORT / "scan_reader.py"), str(files.transcript), str(stop_file),
                                 str(out_file.with_suffix(f".{number}.json"))], cwd=cwd, env=_env(index),
                                stderr=subprocess.PIPE, text=True)
               for number in range(2)]
    time.sleep(0.3)
    writer = subprocess.run([sys.executable, str(SUPPORT / "stress_writer.py"), str(files.transcript), str(cwd), "0",
                             "3000", "11"], cwd=cwd, env=_env(index), capture_output=True, text=True, timeout=600)
    assert writer.returncode == 0, writer.stderr
    stop_file.write_text("stop")
    for reader in readers:
        _, err = reader.communicate(timeout=600)
        assert reader.returncode == 0, err

    final = [record["id"] for record in _lines(files.transcript)[1:]]
    prefixes = {hashlib.sha1("\n".join(final[:count]).encode()).hexdigest(): count for count in range(len(final) + 1)}
    total_scans = 0
    grew = set()
    for number in range(2):
        result = json.loads(out_file.with_suffix(f".{number}.json").read_text())
        assert result["errors"] == []
        for count, digest, *reasons in result["scans"]:
            assert prefixes.get(digest) == count, "a scan saw entries that are not a prefix of the history"
            assert reasons in ([], ["torn tail without newline"]), reasons  # only an append in flight
            grew.add(count)
        total_scans += len(result["scans"])
        assert result["scans"][-1][0] == len(final)
    assert total_scans >= 20 and len(grew) >= 5, "the readers should have scanned while the file grew"
