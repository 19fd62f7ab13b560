"""A fork answers before the disk holds its body, and stays durable through its recovery record
(`sessions/unsynced.py`): what the record holds, settling it in the same boot, and repairing the
fork from its source after a crash of the machine (simulated: the record names another boot and
the fork loses part of its body, as a lost write-back would)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commandcode.agent import branching
from commandcode.checkpoints.gc import collect
from commandcode.sessions import unsynced
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.reader import open_session
from commandcode.sessions.writer import SessionWriter
from helpers.trees import branched_session

pytestmark = pytest.mark.skipif(unsynced.boot_id() is None, reason="the system gives no boot id")


def _fork(workdir: Path, name: str | None = None) -> tuple[SessionFiles, SessionFiles, bytes]:
    files, _ids = branched_session(workdir)
    result = branching.fork_session(files, workdir, name=name)
    return files, result.files, result.files.transcript.read_bytes()


def _as_after_a_crash(fork: SessionFiles) -> None:
    record = unsynced.record_path(fork.transcript)
    value = json.loads(record.read_bytes())
    value["boot"] = "a-boot-before-the-crash"
    record.write_text(json.dumps(value))


def test_a_fork_leaves_a_record_that_describes_its_bytes(home: Path, workdir: Path) -> None:
    source, fork, data = _fork(workdir, name="experiment")
    record = unsynced.record_path(fork.transcript)
    assert record.name == f".{fork.session_id}.jsonl.unsynced"
    decoded = unsynced.Layout.decode(record.read_bytes())
    assert decoded is not None
    boot, layout = decoded
    assert boot == unsynced.boot_id() and layout.source == source.transcript
    body = source.transcript.read_bytes()
    made = layout.head + b"".join(body[offset:offset + length] for offset, length in layout.ranges) + layout.tail
    assert made == data and layout.size == len(data)
    assert b'"session_info"' in layout.tail


def test_opening_a_fork_in_the_same_boot_settles_it_and_changes_nothing(home: Path, workdir: Path) -> None:
    _source, fork, data = _fork(workdir)
    inode = os.stat(fork.transcript).st_ino
    open_session(fork.transcript)
    assert not unsynced.record_path(fork.transcript).exists()
    assert fork.transcript.read_bytes() == data and os.stat(fork.transcript).st_ino == inode


@pytest.mark.parametrize("damage", ["cut", "emptied", "hole"])
def test_a_fork_the_disk_lost_part_of_is_made_whole_from_its_source(home: Path, workdir: Path, damage: str) -> None:
    _source, fork, data = _fork(workdir, name="experiment")
    _as_after_a_crash(fork)
    with fork.transcript.open("r+b") as handle:
        if damage == "cut":
            handle.truncate(len(data) // 2)
        elif damage == "emptied":
            handle.truncate(0)
        else:  # a block the write-back never reached reads as zeros
            handle.seek(len(data) // 3)
            handle.write(b"\0" * (len(data) // 3))
    session = open_session(fork.transcript)
    assert fork.transcript.read_bytes() == data
    assert session.name == "experiment" and session.skipped_lines == []
    assert not unsynced.record_path(fork.transcript).exists()


def test_a_fork_of_a_fork_is_repaired_after_its_source_is(home: Path, workdir: Path) -> None:
    _source, first, first_data = _fork(workdir)
    record = unsynced.record_path(first.transcript).read_bytes()
    second = branching.fork_session(first, workdir).files  # opening the first settled it: as if it had not
    unsynced.record_path(first.transcript).write_bytes(record)
    second_data = second.transcript.read_bytes()
    for fork, data in ((first, first_data), (second, second_data)):
        _as_after_a_crash(fork)
        with fork.transcript.open("r+b") as handle:
            handle.truncate(len(data) // 3)
    open_session(second.transcript)  # the second is repaired from the first, once the first is whole
    assert second.transcript.read_bytes() == second_data and first.transcript.read_bytes() == first_data
    assert not unsynced.record_path(first.transcript).exists()


def test_an_intact_fork_after_a_crash_is_kept_as_it_is(home: Path, workdir: Path) -> None:
    _source, fork, data = _fork(workdir)
    _as_after_a_crash(fork)
    inode = os.stat(fork.transcript).st_ino
    open_session(fork.transcript)
    assert fork.transcript.read_bytes() == data and os.stat(fork.transcript).st_ino == inode
    assert not unsynced.record_path(fork.transcript).exists()


def test_the_writer_repairs_before_it_appends(home: Path, workdir: Path) -> None:
    _source, fork, data = _fork(workdir)
    _as_after_a_crash(fork)
    with fork.transcript.open("r+b") as handle:
        handle.truncate(len(data) - 7)  # a torn last line
    with SessionWriter(fork, str(workdir)) as writer:
        writer.append_message({"role": "user", "content": "after the crash"})
        writer.commit(force=True)
    after = fork.transcript.read_bytes()
    assert after.startswith(data) and b"after the crash" in after[len(data):]
    assert open_session(fork.transcript).skipped_lines == []


def test_a_fork_whose_source_is_gone_is_left_as_it_is_with_one_warning(workdir: Path, home: Path,
                                                                      tmp_path: Path) -> None:
    source, fork, data = _fork(workdir)
    _as_after_a_crash(fork)
    with fork.transcript.open("r+b") as handle:
        handle.truncate(len(data) // 2)
    cut = fork.transcript.read_bytes()
    source.transcript.rename(tmp_path / "moved.jsonl")
    script = ("import sys; from commandcode.sessions.reader import open_session; "
              "open_session(sys.argv[1])")
    done = subprocess.run([sys.executable, "-c", script, str(fork.transcript)], capture_output=True, text=True,
                          env={**os.environ, "COMMANDCODE_HOME": str(home)}, check=True)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: the fork") and "left as it is" in lines[0]
    assert fork.transcript.read_bytes() == cut  # never rewritten from nothing
    assert not unsynced.record_path(fork.transcript).exists()


def test_a_fork_another_program_appended_to_is_never_overwritten(home: Path, workdir: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _source, fork, data = _fork(workdir)
    _as_after_a_crash(fork)
    grown = data[:10] + b"X" + data[11:] + b'{"type":"message","id":"late"}\n'
    fork.transcript.write_bytes(grown)
    unsynced.settle(fork.transcript)
    assert fork.transcript.read_bytes() == grown
    assert "it has grown since" in capsys.readouterr().err


def test_an_unreadable_record_without_its_fork_goes_with_the_sweep(home: Path, workdir: Path) -> None:
    files, _ids = branched_session(workdir)
    torn = files.directory / ".00000000-0000-4000-8000-00000000abcd.jsonl.unsynced"
    torn.write_bytes(b'{"version":1,"bo')
    other = files.directory / ".00000000-0000-4000-8000-00000000abce.jsonl.unsynced"
    other.write_bytes(b"{}")
    before = {path.name: path.read_bytes() for path in files.directory.iterdir() if path not in (torn, other)}
    collect()
    assert not torn.exists() and not other.exists()
    assert {path.name: path.read_bytes() for path in files.directory.iterdir()} == before


def test_a_failed_fork_takes_its_record_away(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files, _ids = branched_session(workdir)
    before = sorted(path.name for path in files.directory.iterdir())

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("commandcode.sessions.lineage.NewSessionFiles.write_meta", refuse)
    with pytest.raises(OSError):
        branching.fork_session(files, workdir)
    assert sorted(path.name for path in files.directory.iterdir()) == before


def test_the_command_line_fork_answers_with_its_record_in_place(home: Path, workdir: Path) -> None:
    files, _ids = branched_session(workdir)
    done = subprocess.run([sys.executable, "-m", "commandcode", "sessions", "fork", files.session_id, "--json"],
                          capture_output=True, text=True, cwd=workdir, check=True,
                          env={**os.environ, "COMMANDCODE_HOME": str(home)})
    fork = Path(json.loads(done.stdout)["path"])
    assert unsynced.record_path(fork).is_file()
    subprocess.run([sys.executable, "-m", "commandcode", "sessions", "show", fork.stem], capture_output=True,
                   cwd=workdir, check=True, env={**os.environ, "COMMANDCODE_HOME": str(home)})
    assert not unsynced.record_path(fork).exists()


def test_without_a_boot_id_a_fork_waits_for_the_disk_and_leaves_no_record(home: Path, workdir: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    files, _ids = branched_session(workdir)
    monkeypatch.setattr("commandcode.sessions.fork.boot_id", lambda: None)
    synced: list[int] = []
    real_fsync, real_fdatasync = os.fsync, os.fdatasync

    def fsync(descriptor: int) -> None:
        synced.append(os.fstat(descriptor).st_size)
        real_fsync(descriptor)

    def fdatasync(descriptor: int) -> None:
        synced.append(os.fstat(descriptor).st_size)
        real_fdatasync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    fork = branching.fork_session(files, workdir).files
    assert not unsynced.record_path(fork.transcript).exists()
    assert fork.transcript.stat().st_size in synced  # the whole transcript was flushed before it was linked


def test_a_record_that_is_no_regular_file_never_blocks_an_open(home: Path, workdir: Path) -> None:
    _source, fork, data = _fork(workdir)
    record = unsynced.record_path(fork.transcript)
    record.unlink()
    os.mkfifo(record)  # read whole, a FIFO would block the open for good
    script = "import sys; from commandcode.sessions.reader import open_session; print(open_session(sys.argv[1]).id)"
    done = subprocess.run([sys.executable, "-c", script, str(fork.transcript)], capture_output=True, text=True,
                          env={**os.environ, "COMMANDCODE_HOME": str(home)}, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == fork.session_id, done.stderr
    assert fork.transcript.read_bytes() == data and record.exists()  # left as it is


def test_the_record_has_one_name_for_the_fork_the_reader_and_the_sweep(home: Path, workdir: Path) -> None:
    _source, fork, _data = _fork(workdir)
    record = unsynced.record_path(fork.transcript)
    assert record.is_file() and str(record) == fork.unsynced_record  # what the fork wrote, the reader looks for
    assert SessionFiles.session_of_unsynced_record(record.name) == fork.session_id  # and the sweep finds
    for other in (fork.transcript.name, f"{fork.session_id}.jsonl.unsynced", ".jsonl.unsynced", ".x.jsonl.1.tmp"):
        assert SessionFiles.session_of_unsynced_record(other) is None


def _dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True)
    return int(child.stdout)


def test_a_collection_lists_each_project_folder_once_for_temps_and_records(home: Path, workdir: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`sweep` and `doctor --gc` remove a killed fork's temp and settle a fork's record from one
    listing of the folder (`sessions/project_upkeep.py`), not one walk of `projects/` each."""
    _source, fork, data = _fork(workdir)
    other = fork.directory.parent / "-another-project"
    other.mkdir()
    dead = _dead_pid()
    temps = [fork.directory / f".{fork.session_id}.jsonl.{dead}.tmp", other / f".abc.jsonl.{dead}.tmp"]
    for temp in temps:
        temp.write_bytes(b"a killed fork's copy\n")
    listed: list[tuple[str, str]] = []
    real_listdir, real_scandir = os.listdir, os.scandir

    def caller() -> str:
        return str(sys._getframe(2).f_globals.get("__name__"))

    def listdir(path: object = ".") -> list[str]:
        listed.append((caller(), os.fspath(path)))  # type: ignore[arg-type]
        return real_listdir(path)  # type: ignore[arg-type]

    def scandir(path: object = ".") -> object:
        listed.append((caller(), os.fspath(path)))  # type: ignore[arg-type]
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", listdir)
    monkeypatch.setattr(os, "scandir", scandir)
    report = collect()
    monkeypatch.undo()
    assert report.temporaries == 2 and not any(temp.exists() for temp in temps)
    assert not unsynced.record_path(fork.transcript).exists() and fork.transcript.read_bytes() == data
    by_sessions = [path for module, path in listed if module.startswith("commandcode.sessions.")]
    for folder in (fork.directory, other):
        assert by_sessions.count(str(folder)) == 1, listed
    assert by_sessions.count(str(fork.directory.parent)) == 1, listed
