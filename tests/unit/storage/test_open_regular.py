"""`fsutil.open_regular`, the one way commandcode opens a file: a FIFO, socket, device or folder
is refused at once (never a blocking open, never a device read), a final symlink only when the
caller follows links on purpose, and `atomic_write` / `replace_file` never rename over a planted
non-file nor leave a temp file behind."""

from __future__ import annotations

import errno
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from commandcode.storage.durable import atomic_write, replace_file
from commandcode.storage.regular import NotRegularFileError, open_regular, read_regular

ACCESS = {"read": os.O_RDONLY, "write": os.O_WRONLY, "append": os.O_WRONLY | os.O_APPEND,
          "rdwr-create": os.O_RDWR | os.O_CREAT, "create-excl": os.O_WRONLY | os.O_CREAT | os.O_EXCL}


@pytest.fixture
def things(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    monkeypatch.chdir(tmp_path)
    made = {"fifo": tmp_path / "fifo", "socket": tmp_path / "socket", "chardev": tmp_path / "chardev",
            "folder": tmp_path / "folder"}
    os.mkfifo(made["fifo"])
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("socket")
    os.mknod(made["chardev"], stat.S_IFCHR | 0o600, os.makedev(1, 5))
    made["folder"].mkdir()
    for name in list(made):
        (tmp_path / f"link_{name}").symlink_to(made[name])
        made[f"link_{name}"] = tmp_path / f"link_{name}"
    try:
        yield made
    finally:
        server.close()


@pytest.mark.parametrize("access", ACCESS)
@pytest.mark.parametrize("follow", [True, False])
@pytest.mark.parametrize("name", ["fifo", "socket", "chardev", "folder", "link_fifo", "link_socket", "link_chardev",
                                  "link_folder"])
def test_anything_but_a_regular_file_is_refused(things: dict[str, Path], name: str, follow: bool, access: str) -> None:
    path = things[name]
    before = os.lstat(path)
    with pytest.raises(OSError) as raised:
        os.close(open_regular(path, ACCESS[access], follow=follow))
    error = raised.value
    if name.startswith("link_") and not follow:
        assert error.errno == errno.ELOOP
    else:
        assert isinstance(error, NotRegularFileError), error
        assert "not a regular file" in error.strerror and error.filename == str(path)
    after = os.lstat(path)
    assert (after.st_ino, after.st_mode, after.st_size) == (before.st_ino, before.st_mode, before.st_size)


def test_a_symlink_to_a_regular_file_is_read_only_when_following(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"bytes")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert read_regular(tmp_path / "link", follow=True) == b"bytes"
    with pytest.raises(OSError) as raised:
        read_regular(tmp_path / "link")
    assert raised.value.errno == errno.ELOOP
    assert read_regular(tmp_path / "real", limit=2) == b"byt", "a bounded read stops one byte past the bound"


@pytest.mark.parametrize("name", ["fifo", "socket", "chardev", "folder"])
def test_atomic_writes_leave_a_planted_non_file_in_place(things: dict[str, Path], name: str) -> None:
    path = things[name]
    before = os.lstat(path)
    for write in (lambda: atomic_write(path, b"data"), lambda: replace_file(path, b"data", like=None)):
        with pytest.raises(OSError):
            write()
        after = os.lstat(path)
        assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert sorted(entry for entry in os.listdir(path.parent) if ".tmp" in entry) == []
