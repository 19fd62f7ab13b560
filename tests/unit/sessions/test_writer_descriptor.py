"""The writer keeps the transcript open for its whole life (one `open` for every commit, closed
with the writer), yet never appends to a file the path no longer names: a transcript another
program replaced gets the next commit, nothing goes into the orphaned file."""

from __future__ import annotations

import os
from pathlib import Path

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
