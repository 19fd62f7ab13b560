"""Fork and clone of a session's files (`sessions/fork.py`, `sessions/clone.py`, `agent/branching.py`):
what the new files hold, what the source keeps, and what a failure leaves (nothing)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from commandcode.agent import branching
from commandcode.agent.runtime import AgentSession
from commandcode.errors import CommandcodeError, InvalidSessionError, UsageError
from commandcode.sessions import fork as fork_module
from commandcode.sessions import fork_ends
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.reader import open_session
from commandcode.sessions.writer import SessionWriter
from helpers.locations import FIXTURES
from helpers.trees import branched_session


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_fork_copies_every_branch_byte_for_byte_under_a_fresh_header(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    files.checkpoints.write_text('{"id":"c1","files":[]}')
    before = {path: path.read_bytes() for path in files.directory.iterdir()}
    result = branching.fork_session(files, workdir)
    assert {path: path.read_bytes() for path in files.directory.iterdir() if path in before} == before
    new = result.files
    source_lines, fork_lines = _lines(files.transcript), _lines(new.transcript)
    header = json.loads(fork_lines[0])
    assert header["id"] == new.session_id and "parentSession" not in header and header["cwd"] == str(workdir)
    assert fork_lines[1:] == source_lines[1:]
    assert new.checkpoints.read_bytes() == files.checkpoints.read_bytes()
    meta = json.loads(new.meta.read_text())
    assert meta["parentSessionId"] == files.session_id and meta["branchPoint"] == ids["a5"]
    assert meta["model"] == "offline" and "title" not in meta and "userRenamed" not in meta and "forkedAt" in meta
    forked = open_session(new.transcript)
    assert forked.context().messages == open_session(files.transcript).context().messages
    assert os.stat(new.transcript).st_mode & 0o777 == 0o600


def test_a_named_fork_records_the_name_as_entry_and_meta(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    result = branching.fork_session(files, workdir, name="  experiment one\n")
    forked = open_session(result.files.transcript)
    assert forked.name == "experiment one"
    last = forked.read_entries([forked.leaf_id])[0]
    assert last["type"] == "session_info" and last["parentId"] == ids["a5"]
    meta = json.loads(result.files.meta.read_text())
    assert meta["title"] == "experiment one" and meta["userRenamed"] is True
    with pytest.raises(CommandcodeError, match="taken"):
        branching.fork_session(files, workdir, name="EXPERIMENT ONE")
    with pytest.raises(UsageError, match="the limit is 200"):
        branching.fork_session(files, workdir, name="x" * 201)
    with pytest.raises(UsageError, match="empty"):
        branching.fork_session(files, workdir, name="  ")


def test_fork_copies_corrupt_lines_verbatim_and_leaves_a_torn_tail_out(home: Path, workdir: Path) -> None:
    """The source is never scanned: a corrupt line comes along and is skipped in the fork as in
    the source (same line number, same reason); a torn tail stays out; no notice is due."""
    files, _ids = branched_session(workdir)
    with open(files.transcript, "ab") as handle:
        handle.write(b'{"broken\n')
    with SessionWriter(files, str(workdir)) as writer:
        writer.append_message({"role": "user", "content": "after the corrupt line"})
        writer.commit(force=True)
    with open(files.transcript, "ab") as handle:
        handle.write(b'{"type":"message","id":"torn')  # a torn tail
    notices: list[str] = []
    agent = AgentSession(files, workdir, is_new=False, notify=notices.append)
    fork = agent.navigation.fork()
    data = fork.files.transcript.read_bytes()
    assert b'{"broken\n' in data and b'"torn' not in data and data.endswith(b"\n")
    source, forked = open_session(files.transcript), open_session(fork.files.transcript)
    assert [(line.line, line.reason) for line in forked.skipped_lines] == \
        [(line.line, line.reason) for line in source.skipped_lines if line.reason != "torn tail without newline"]
    assert forked.entry_count == source.entry_count and forked.leaf_id == source.leaf_id
    assert forked.context().messages == source.context().messages
    assert notices == []


def test_a_fork_only_a_scan_can_place_leaves_corrupt_lines_out_and_counts_them(home: Path, workdir: Path) -> None:
    """A transcript whose header is not its first line is opened and copied around what the scan
    skipped, and the count is said."""
    files, _ids = branched_session(workdir)
    files.transcript.write_bytes(b'{"broken\n' + files.transcript.read_bytes())
    notices: list[str] = []
    result = branching.copy_by_reference(files.session_id, workdir, "fork", notify=notices.append)
    data = result.files.transcript.read_bytes()
    assert b'{"broken' not in data
    forked = open_session(result.files.transcript)
    assert forked.skipped_lines == [] and forked.entry_count == open_session(files.transcript).entry_count
    assert notices == [f"{files.transcript.name}: 1 unreadable line(s) left out of the copy"]


def test_a_real_cli_fork_quirk_file_forks_and_reads_right(home: Path, workdir: Path) -> None:
    folder = SessionFiles(workdir, "x").directory  # any folder of ours
    files = SessionFiles(folder, "9e07fc17-d9dc-44f4-9ea9-6398425fd60d")
    shutil.copy(FIXTURES / "fork_quirk.jsonl", files.transcript)
    source = open_session(files.transcript)
    assert source.header.id != files.session_id  # the quirk: the parent's id in the header
    result = branching.fork_session(files, workdir)
    forked = open_session(result.files.transcript)
    assert forked.header.id == result.files.session_id and forked.header.session_id is None
    assert forked.context().messages == source.context().messages
    assert forked.leaf_id == source.leaf_id


def test_a_failed_fork_removes_every_file_it_created(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files, _ids = branched_session(workdir)
    files.checkpoints.write_text('{"id":"c1","files":[]}')
    history = files.file_history
    history.mkdir(parents=True)
    (history / ("a" * 64)).write_bytes(b"raw blob")
    listing = sorted(os.listdir(files.directory))

    def broken_publish(self: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fork_module.NewSessionFiles, "publish", broken_publish)
    with pytest.raises(OSError):
        branching.fork_session(files, workdir)
    assert sorted(os.listdir(files.directory)) == listing
    assert sorted(os.listdir(history.parent)) == [files.session_id]


def test_fork_shares_raw_blobs_by_hard_link(home: Path, workdir: Path) -> None:
    files, _ids = branched_session(workdir)
    history = files.file_history
    history.mkdir(parents=True)
    blob = history / ("b" * 64)
    blob.write_bytes(b"raw blob")
    result = branching.fork_session(files, workdir)
    shared = result.files.file_history / blob.name
    assert shared.read_bytes() == b"raw blob" and os.stat(shared).st_ino == os.stat(blob).st_ino


def test_nothing_saved_yet_is_refused(home: Path, workdir: Path) -> None:
    agent = AgentSession.start(workdir)
    with pytest.raises(InvalidSessionError, match="nothing to fork"):
        agent.navigation.fork()
    with pytest.raises(InvalidSessionError, match="nothing to clone"):
        agent.navigation.clone()


def test_start_with_fork_forks_the_resolved_session(home: Path, workdir: Path) -> None:
    files, _ids = branched_session(workdir)
    agent = AgentSession.start(workdir, reference=files.session_id, fork=True)
    assert agent.session_id != files.session_id and agent.copied_from is not None
    assert json.loads(agent.files.meta.read_text())["parentSessionId"] == files.session_id
    with pytest.raises(UsageError, match="--fork-session"):
        AgentSession.start(workdir, fork=True)


def test_clone_is_the_active_branch_as_a_chain_with_labels_after_it(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    with SessionWriter(files, str(workdir)) as writer:
        writer.append_entry("label", {"targetId": ids["u3"], "label": "b-start"})
        writer.append_entry("label", {"targetId": ids["u2"], "label": "off the path"})
        writer.append_message({"role": "user", "content": "after the labels"})
        writer.commit(force=True)
    source = open_session(files.transcript)
    result = branching.clone_session(files, workdir)
    lines = [json.loads(line) for line in _lines(result.files.transcript)]
    header, entries = lines[0], lines[1:]
    assert header["parentSession"] == str(files.transcript) and header["id"] == result.files.session_id
    kinds = [entry["type"] for entry in entries]
    assert kinds[-1] == "label" and "label" not in kinds[:-1]  # the label on a kept entry, after the chain
    assert entries[-1]["targetId"] == ids["u3"]
    assert [entry["parentId"] for entry in entries] == [None] + [entry["id"] for entry in entries[:-1]]
    clone = open_session(result.files.transcript)
    assert clone.context().messages == source.context().messages
    assert clone.labels() == {ids["u3"]: "b-start"}
    assert ids["u2"] not in {entry["id"] for entry in entries}
    assert not result.files.checkpoints.exists()
    meta = json.loads(result.files.meta.read_text())
    assert meta["parentSessionId"] == files.session_id and meta["model"] == "offline" and "branchPoint" not in meta


def test_a_valid_last_line_without_newline_is_forked_whole(home: Path, workdir: Path) -> None:
    files, ids = branched_session(workdir)
    data = files.transcript.read_bytes()
    files.transcript.write_bytes(data[:-1])  # the last entry, valid, unterminated (the real CLI reads it)
    result = branching.fork_session(files, workdir, name="tail")
    forked = open_session(result.files.transcript)
    assert forked.skipped_lines == [] and forked.has_entry(ids["a5"]) and forked.name == "tail"
    assert forked.read_entries([forked.leaf_id])[0]["parentId"] == ids["a5"]


def test_a_header_only_session_forks_to_a_header_only_session(home: Path, workdir: Path) -> None:
    files = SessionFiles(SessionFiles(workdir, "x").directory, "0b0e7a44-7b5e-4a55-9b4c-8f0b7f3f7a10")
    files.transcript.write_bytes(b'{"type":"session","version":3,"id":"h","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}')
    result = branching.fork_session(files, workdir)
    lines = result.files.transcript.read_bytes().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["id"] == result.files.session_id
    assert open_session(result.files.transcript).entry_count == 0


def _forked_with(files: SessionFiles, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                 during_copy: object = None) -> tuple[Path, list[bool], list[str]]:
    """A fork through `fork_opening`, recording whether the source's ends decided it (`ends`)
    and whether the session was opened (`opened`); `during_copy()` runs after the copy started,
    before the ends are read."""
    ends: list[bool] = []
    opened: list[str] = []
    read = fork_ends.SourceEnds.read

    def recorded(files: SessionFiles, end: int) -> fork_ends.SourceEnds | None:
        if callable(during_copy):
            during_copy()
        found = read(files, end)
        ends.append(found is not None)
        return found

    monkeypatch.setattr(fork_ends.SourceEnds, "read", staticmethod(recorded))

    def opener() -> object:
        opened.append(files.session_id)
        return open_session(files.transcript)

    target = SessionFiles(files.folder, "5d1c7a0e-8f4e-4b8a-9a51-3c2b1e0f9d77")
    result = fork_module.fork_opening(files, target, opener, lambda name: (None, True))  # type: ignore[arg-type]
    return result.files.transcript, ends, opened


def test_a_fork_never_opens_its_source_and_copies_what_was_there_when_it_started(
        home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files, _ids = branched_session(workdir)
    source = files.transcript.read_bytes()
    leaf = open_session(files.transcript).leaf_id
    forked, ends, opened = _forked_with(files, workdir, monkeypatch)
    assert (ends, opened) == ([True], []) and _lines(forked)[1:] == _lines(files.transcript)[1:]
    assert json.loads(_lines(forked)[0])["cwd"] == str(workdir)
    os.unlink(forked)
    for path in forked.parent.glob("5d1c7a0e-*"):
        path.unlink()

    # appended while the kernel copies: the fork is the source as it was when the copy started
    def append() -> None:
        with open(files.transcript, "ab") as handle:
            handle.write(_lines(files.transcript)[-1].replace(b'"id":"', b'"id":"z', 1))

    forked, ends, opened = _forked_with(files, workdir, monkeypatch, append)
    assert (ends, opened) == ([True], [])
    assert _lines(forked)[1:] == source.splitlines(keepends=True)[1:]
    assert len(_lines(files.transcript)) == len(source.splitlines()) + 1
    meta = json.loads(forked.with_name(forked.name[:-6] + ".meta.json").read_text())
    assert meta["branchPoint"] == leaf == open_session(forked).leaf_id
    assert open_session(forked).skipped_lines == []


def test_a_file_put_in_the_sources_place_during_the_copy_is_scanned_not_mixed(
        home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ends must be the copied file's: a transcript replaced (renamed over) while the kernel
    copies makes the fork open the session and copy the new file whole."""
    files, _ids = branched_session(workdir)
    lines = _lines(files.transcript)
    moved = lines[2:] + lines[1:2]  # the same bytes in another order: the same size, another leaf
    replacement = lines[0] + b"".join(moved)

    def replace() -> None:
        staged = files.transcript.with_name("staged.tmp")
        staged.write_bytes(replacement)
        os.replace(staged, files.transcript)

    forked, _ends, opened = _forked_with(files, workdir, monkeypatch, replace)
    assert opened == [files.session_id]
    assert _lines(forked)[1:] == moved
    assert open_session(forked).leaf_id == open_session(files.transcript).leaf_id


def test_a_source_whose_first_line_is_no_header_is_forked_the_plain_way(home: Path, workdir: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    files, _ids = branched_session(workdir)
    lines = _lines(files.transcript)
    files.transcript.write_bytes(b'{"broken\n' + b"".join(lines))  # a torn first line, the header second
    forked, ends, opened = _forked_with(files, workdir, monkeypatch)
    assert (ends, opened) == ([], [files.session_id])  # no header on the first line: no early copy at all
    data = forked.read_bytes()
    assert b'{"broken' not in data and _lines(forked)[1:] == lines[1:]
    assert json.loads(_lines(forked)[0])["cwd"] == str(workdir)


def test_a_source_with_a_header_among_its_last_lines_is_scanned(home: Path, workdir: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a scan in order can say what a header line after the entries is: the ends decline,
    the session is opened, and the copy is the scan's."""
    files, _ids = branched_session(workdir)
    lines = _lines(files.transcript)
    files.transcript.write_bytes(b"".join(lines) + lines[0])
    forked, ends, opened = _forked_with(files, workdir, monkeypatch)
    assert (ends, opened) == ([False], [files.session_id])
    assert open_session(forked).entry_count == open_session(files.transcript).entry_count


def test_a_fork_header_shorter_than_the_sources_is_padded_to_its_length(home: Path, workdir: Path) -> None:
    """The body then sits at the same offset in both files (the kernel copies it faster so); the
    padding is JSON whitespace, so the header reads the same."""
    files, _ids = branched_session(workdir)
    lines = _lines(files.transcript)
    wide = json.dumps(json.loads(lines[0]), indent=None, separators=(", ", ": ")).encode() + b"\n"  # longer
    files.transcript.write_bytes(wide + b"".join(lines[1:]))
    for result in (branching.fork_session(files, workdir), fork_module.fork_files(open_session(files.transcript),
                                                                                    SessionFiles(files.folder, "f" * 8))):
        forked = result.files.transcript.read_bytes()
        header = forked.split(b"\n", 1)[0] + b"\n"
        assert len(header) == len(wide) and header.endswith(b" }\n")
        assert json.loads(header)["id"] == result.files.session_id
        assert forked[len(header):] == b"".join(lines[1:])
        session = open_session(result.files.transcript)
        assert session.skipped_lines == [] and session.cwd == str(workdir)
    assert fork_module.aligned_header(b'{"a":1}\n', 5) == b'{"a":1}\n'  # a longer line is left as it is
