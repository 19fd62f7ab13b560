"""The writer keeps the transcript open for its whole life (one `open` for every commit, closed
with the writer), yet never appends to a file the path no longer names: a transcript another
program replaced gets the next commit, nothing goes into the orphaned file.

A commit is one grouped write and one `fdatasync`, and a grouped write that fails partway (a short
write then `ENOSPC`, or a failed `fdatasync`) leaves the transcript exactly at the previous commit,
as a kill before the commit would: never half a turn. The writer then goes on: the next commit
lands whole after the previous one. Entry ids drawn ahead in batches are never shared with a
forked child."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from commandcode.config.paths import project_dir
from commandcode.sessions import writer as writer_module
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.reader import open_session
from commandcode.sessions.writer import SessionWriter
from commandcode.storage import ids


def message(role: str, text: str) -> dict[str, object]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def new_session(workdir: Path) -> tuple[SessionFiles, list[str]]:
    files = SessionFiles(project_dir(workdir), ids.new_uuid())
    with SessionWriter(files, str(workdir)) as writer:
        written = [writer.append_message(message("user", "hi")), writer.append_message(message("assistant", "hello"))]
        writer.commit()
    return files, written


def test_commits_share_one_descriptor_closed_with_the_writer(home: Path, workdir: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    files, written = new_session(workdir)
    opened: list[int] = []
    real_open = writer_module.open_regular

    def counting(*args: object, **options: object) -> int:
        descriptor = real_open(*args, **options)  # type: ignore[arg-type]
        opened.append(descriptor)
        return descriptor

    monkeypatch.setattr(writer_module, "open_regular", counting)
    with SessionWriter(files, str(workdir)) as writer:
        for turn in range(5):
            written.append(writer.append_message(message("user", f"again {turn}")))
            written.append(writer.append_message(message("assistant", f"reply {turn}")))
            writer.commit()
    assert len(opened) == 1
    with pytest.raises(OSError):
        os.fstat(opened[0])  # closed with the writer
    assert open_session(files.transcript).context().entry_ids == written


def test_a_replaced_transcript_gets_the_next_commit(home: Path, workdir: Path) -> None:
    files, written = new_session(workdir)
    with SessionWriter(files, str(workdir)) as writer:
        written.append(writer.append_message(message("user", "before the swap")))
        writer.commit()
        copy = files.transcript.with_name("copy.jsonl")
        copy.write_bytes(files.transcript.read_bytes())
        os.replace(copy, files.transcript)  # another program rewrote it (a new file at the path)
        written.append(writer.append_message(message("assistant", "after the swap")))
        writer.commit()
    assert open_session(files.transcript).context().entry_ids == written


def queue_turn(writer: SessionWriter, turn: int) -> list[str]:
    """A turn of ten entries: a prompt, four tool steps with their results, a reply."""
    queued = [writer.append_message(message("user", f"turn {turn}"))]
    for step in range(4):
        call = f"call_{turn}_{step}"
        queued.append(writer.append_message({"role": "assistant", "content": [
            {"type": "tool_use", "id": call, "name": "read_file", "input": {"path": f"m{step}.py"}}]}))
        queued.append(writer.append_message({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": "x" * 300}]}))
    queued.append(writer.append_message(message("assistant", f"done {turn}")))
    return queued


def test_a_commit_of_a_turn_is_one_write_and_one_fdatasync(home: Path, workdir: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    files, written = new_session(workdir)
    calls: list[tuple[str, int]] = []
    real_write, real_sync = os.write, os.fdatasync

    def write(descriptor: int, data: Any) -> int:
        calls.append(("write", len(data)))
        return real_write(descriptor, data)

    def fdatasync(descriptor: int) -> None:
        calls.append(("fdatasync", descriptor))
        real_sync(descriptor)

    with SessionWriter(files, str(workdir)) as writer:
        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fdatasync", fdatasync)
        for turn in range(3):
            written += queue_turn(writer, turn)
            writer.commit()
        monkeypatch.undo()
    assert [name for name, _ in calls] == ["write", "fdatasync"] * 3
    assert open_session(files.transcript).context().entry_ids == written


@pytest.mark.parametrize("failure", ["short write, then ENOSPC", "ENOSPC at once", "fdatasync fails"])
def test_a_grouped_write_failing_partway_leaves_the_previous_commit(home: Path, workdir: Path, failure: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    files, written = new_session(workdir)
    with SessionWriter(files, str(workdir)) as writer:
        written += queue_turn(writer, 0)
        writer.commit()
        before, mark = files.transcript.read_bytes(), writer.mark()
        queue_turn(writer, 1)  # this turn never reaches disk
        real_write, real_sync = os.write, os.fdatasync
        taken: list[int] = []

        def full_disk(descriptor: int, data: Any) -> int:
            if failure == "short write, then ENOSPC" and not taken:
                taken.append(real_write(descriptor, bytes(data[:777])))  # part of the turn, mid-line
                return taken[0]
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def failing_sync(descriptor: int) -> None:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

        if failure == "fdatasync fails":
            monkeypatch.setattr(os, "fdatasync", failing_sync)
        else:
            monkeypatch.setattr(os, "write", full_disk)
        with pytest.raises(OSError) as raised:
            writer.commit()
        assert raised.value.errno == (errno.EIO if failure == "fdatasync fails" else errno.ENOSPC)
        monkeypatch.setattr(os, "write", real_write)
        monkeypatch.setattr(os, "fdatasync", real_sync)
        assert files.transcript.read_bytes() == before  # cut back: not a byte of the failed turn
        # the failed turn stays queued (the caller decides); a new one after it lands whole
        writer.discard_to(mark)
        written += queue_turn(writer, 2)
        writer.commit()
    data = files.transcript.read_bytes()
    assert data.startswith(before) and data.endswith(b"\n")
    session = open_session(files.transcript)
    assert session.skipped_lines == []
    assert session.context().entry_ids == written


def test_entry_ids_drawn_ahead_are_not_shared_with_a_forked_child() -> None:
    ids.fresh_entry_id()  # the parent holds a batch drawn ahead
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        os.close(reader)
        os.write(writer, " ".join(ids.fresh_entry_id() for _ in range(64)).encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        drawn_by_child = set(pipe.read().decode().split())
    os.waitpid(child, 0)
    drawn_by_parent = {ids.fresh_entry_id() for _ in range(64)}
    assert len(drawn_by_child) == len(drawn_by_parent) == 64
    assert drawn_by_child.isdisjoint(drawn_by_parent)
    assert all(len(value) == 8 and int(value, 16) >= 0 for value in drawn_by_child | drawn_by_parent)
