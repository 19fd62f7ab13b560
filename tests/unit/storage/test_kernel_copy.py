"""`storage.kernel_copy.copy_range`: the bytes, the write-back it starts as it goes, the plain
fallback where the kernel refuses the copy, and a source that shrinks under it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from commandcode.storage import kernel_copy


def _files(tmp_path: Path, data: bytes) -> tuple[int, int, Path]:
    source = tmp_path / "source"
    source.write_bytes(data)
    target = tmp_path / "target"
    reader = os.open(source, os.O_RDONLY)
    writer = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    return reader, writer, target


def test_a_range_lands_after_what_the_target_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel_copy, "_CHUNK", 1000)  # several chunks, each with its write-back
    started: list[tuple[int, int]] = []
    writeback = kernel_copy._writeback()

    def recording(descriptor: int, offset: int, count: int) -> None:
        started.append((offset, count))
        writeback(descriptor, offset, count)

    monkeypatch.setattr(kernel_copy, "_writeback", lambda: recording)
    data = bytes(range(256)) * 40
    reader, writer, target = _files(tmp_path, data)
    try:
        os.write(writer, b"HEADER\n")
        kernel_copy.copy_range(reader, writer, 100, 5000)
        os.fsync(writer)
    finally:
        os.close(reader)
        os.close(writer)
    assert target.read_bytes() == b"HEADER\n" + data[100:5100]
    # the write-back of each chunk is started where it landed in the target, in order, covering it all
    assert started == [(7 + 1000 * n, 1000) for n in range(5)]


def test_a_copy_nobody_fsyncs_soon_starts_no_write_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel_copy, "_CHUNK", 1000)
    started: list[tuple[int, int]] = []
    monkeypatch.setattr(kernel_copy, "_writeback", lambda: lambda _fd, offset, count: started.append((offset, count)))
    data = bytes(range(256)) * 40
    reader, writer, target = _files(tmp_path, data)
    try:
        kernel_copy.copy_range(reader, writer, 0, len(data), writeback=False)
    finally:
        os.close(reader)
        os.close(writer)
    assert target.read_bytes() == data and started == []


def test_the_write_back_call_is_found_on_linux() -> None:
    kernel_copy._start_writeback = None
    assert kernel_copy._writeback() is not kernel_copy._no_writeback


def test_a_refused_kernel_copy_falls_back_to_plain_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object) -> int:
        raise OSError(errno.EXDEV, "cross-device")

    monkeypatch.setattr(os, "copy_file_range", refused)
    monkeypatch.setattr(kernel_copy, "_PLAIN_CHUNK", 7)
    data = b"0123456789" * 30
    reader, writer, target = _files(tmp_path, data)
    try:
        kernel_copy.copy_range(reader, writer, 3, 250)
    finally:
        os.close(reader)
        os.close(writer)
    assert target.read_bytes() == data[3:253]


def test_any_other_error_is_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(*args: object) -> int:
        raise OSError(errno.ENOSPC, "no space left on device")

    monkeypatch.setattr(os, "copy_file_range", failing)
    reader, writer, _ = _files(tmp_path, b"x" * 100)
    try:
        with pytest.raises(OSError) as raised:
            kernel_copy.copy_range(reader, writer, 0, 100)
    finally:
        os.close(reader)
        os.close(writer)
    assert raised.value.errno == errno.ENOSPC


@pytest.mark.parametrize("refuse", [False, True], ids=["kernel", "plain"])
def test_a_source_shorter_than_the_range_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refuse: bool) -> None:
    if refuse:
        monkeypatch.setattr(os, "copy_file_range", lambda *args: (_ for _ in ()).throw(OSError(errno.ENOSYS, "no")))
    reader, writer, _ = _files(tmp_path, b"y" * 100)
    try:
        with pytest.raises(kernel_copy.RangeShrankError):
            kernel_copy.copy_range(reader, writer, 50, 100)
    finally:
        os.close(reader)
        os.close(writer)
