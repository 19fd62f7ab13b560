"""Live roots of the store's garbage collection: objects a running process counts on that no
record names yet.

Shell tracking (`shell_tracking.py`) keeps a baseline of the project in the store: every file's
bytes are an object, but a record names one only once a command changes that file. Such an
object can be old (the same content stored long ago, by another session), so the collection's
one-hour grace does not protect it for a session running for hours; were it collected, a later
`bash` change to that file would record a backup of bytes the store no longer has.

So each tracking process appends the ids it counts on to its own roots file,
`objects/roots/<pid>-<random>.roots` (one 64-hex id a line), which it holds `flock`ed (exclusive)
for as long as it runs. `live_root_ids()` (called by `gc.marked`) keeps the ids of every roots
file whose lock is held, and removes the files whose process is gone (the kernel drops the lock
when a process dies, even by kill -9). A file is locked before it gets its `.roots` name, so a
collection never takes a fresh one for a dead one.
"""

from __future__ import annotations

import fcntl
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

ROOTS_FOLDER = "roots"
SUFFIX = ".roots"


class LiveRoots:
    """This process's roots file (made on the first `add`)."""

    def __init__(self, store_root: Path) -> None:
        self.folder = store_root / ROOTS_FOLDER
        self._fd: int | None = None
        self._path: Path | None = None
        self._written: set[str] = set()

    def _open(self) -> int:
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        stem = f"{os.getpid()}-{secrets.token_hex(4)}"
        staged = self.folder / f".{stem}.tmp"
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # before it has its name: a collection never sees it unlocked
        self._path = self.folder / f"{stem}{SUFFIX}"
        os.rename(staged, self._path)
        self._fd = fd
        return fd

    def add(self, ids: Iterable[str]) -> None:
        """Appends the ids not written yet. Raises OSError when the file cannot be written."""
        new = [content_id for content_id in dict.fromkeys(ids) if content_id not in self._written]
        if not new:
            return
        fd = self._fd if self._fd is not None else self._open()
        os.write(fd, "".join(f"{content_id}\n" for content_id in new).encode("ascii"))
        self._written.update(new)

    def close(self) -> None:
        """Removes the file (the process no longer counts on its objects)."""
        if self._fd is None:
            return
        if self._path is not None:
            try:
                os.unlink(self._path)
            except OSError:
                pass
        os.close(self._fd)
        self._fd = self._path = None
        self._written.clear()


def live_root_ids(store_root: Path) -> set[str]:
    """The ids in the roots files of running processes; the files of dead ones are removed."""
    folder = store_root / ROOTS_FOLDER
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return set()
    found: set[str] = set()
    for name in names:
        if not name.endswith(SUFFIX):
            continue
        path = folder / name
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:  # held: its process runs
                found.update(_ids(fd))
                continue
            os.unlink(path)  # nobody holds it: its process is gone
        except OSError:
            continue
        finally:
            os.close(fd)
    return found


def _ids(fd: int) -> set[str]:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    lines = b"".join(chunks).split(b"\n")
    return {line.decode("ascii") for line in lines if len(line) == 64 and all(c in b"0123456789abcdef" for c in line)}
