"""A fork whose body the disk may not hold yet: its recovery record, and settling it (format §4.8).

A fork answers once its body is copied, without waiting for the disk to write a copy of the whole
source (on a disk without reflinks that wait was as long as the copy). Before it is published,
the fork writes and `fsync`s a small record beside it, `.<sid>.jsonl.unsynced` (the name is
`SessionFiles.unsynced_record`'s): the machine's boot id, and how its transcript is made (its own
header line, byte ranges of the source transcript, its own tail). The record makes the fork
durable: whatever the disk lost of the body in a crash of the machine can be copied again from
the source, which is only ever appended to.

`settle(transcript)` runs before a fork is read or written (`reader.open_session`, so the
writer too: it looks for the record with one `lstat`) and from the sweep.

- Same boot: nothing the page cache held was lost (a killed process loses no written page). The
  transcript is `fdatasync`ed (the kernel has usually written it back already) and the record
  goes.
- Another boot (the machine stopped since): the transcript is compared with the source's ranges;
  a difference is repaired under the writer lock by writing the fork again from the source into
  a temp file and renaming it over. A source that is gone or shorter than the ranges cannot
  repair: one warning line, the fork is left as it is.
- A record that cannot be read was never followed by a published fork (it is `fsync`ed before
  the fork's name is linked): it goes, and so does nothing else.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from ..storage.durable import fsync_dir, open_for_write, write_all
from ..storage.regular import open_regular, read_regular
from .files import SessionFiles

_COMPARE_CHUNK = 1 << 20
_BOOT_ID = "/proc/sys/kernel/random/boot_id"


def record_path(transcript: Path) -> Path:
    """The recovery record of the fork whose transcript is `transcript` (its name:
    `SessionFiles.unsynced_record`)."""
    return Path(SessionFiles.for_transcript(transcript).unsynced_record)


def boot_id() -> str | None:
    """This boot of the machine (None where the system does not say: forks then wait for the
    disk as before)."""
    try:
        with open(_BOOT_ID, "rb") as handle:
            return handle.read().decode("ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


class Layout:
    """How a fork's transcript is made: `head`, then the `ranges` of `source`, then `tail`."""

    __slots__ = ("head", "source", "ranges", "tail")

    def __init__(self, head: bytes, source: Path, ranges: list[tuple[int, int]], tail: bytes) -> None:
        self.head, self.source, self.ranges, self.tail = head, source, ranges, tail

    @property
    def size(self) -> int:
        return len(self.head) + sum(length for _, length in self.ranges) + len(self.tail)

    def encode(self, boot: str) -> bytes:
        return json.dumps({
            "version": 1, "boot": boot, "source": os.fsencode(self.source).decode("utf-8", "surrogateescape"),
            "head": base64.b64encode(self.head).decode("ascii"), "ranges": self.ranges,
            "tail": base64.b64encode(self.tail).decode("ascii"),
        }, ensure_ascii=True).encode("ascii") + b"\n"

    @classmethod
    def decode(cls, data: bytes) -> tuple[str, Layout] | None:
        """`(boot, layout)`, or None for a record that cannot be read."""
        try:
            value = json.loads(data)
            ranges = [(int(offset), int(length)) for offset, length in value["ranges"]]
            if value["version"] != 1 or any(offset < 0 or length < 0 for offset, length in ranges):
                return None
            source = Path(str(value["source"]).encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape"))
            return str(value["boot"]), cls(base64.b64decode(value["head"], validate=True), source, ranges,
                                           base64.b64decode(value["tail"], validate=True))
        except (ValueError, KeyError, TypeError):
            return None


def write_record(transcript: Path, layout: Layout, boot: str) -> Path:
    """Writes and `fsync`s the record of the fork about to be published at `transcript` (its
    folder's entry is flushed by the publication's own folder `fsync`, which comes after)."""
    path = record_path(transcript)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # one a killed fork of the same id left: it was never published
    descriptor = open_for_write(path, exclusive=True)
    try:
        write_all(descriptor, layout.encode(boot))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return path


def settle(transcript: Path, *, locked: bool = False) -> None:
    """Makes sure the fork at `transcript` holds its whole body on the disk, and drops its record
    (see the module's text). `locked`: the caller holds the transcript's writer lock."""
    record = record_path(transcript)
    try:
        data = read_regular(record)
    except OSError:  # gone, or no regular file (a FIFO would block the open): left as it is
        return
    decoded = Layout.decode(data)
    if decoded is None or not os.path.lexists(transcript):
        _drop(record)  # never published, or the fork was removed since
        return
    boot, layout = decoded
    if boot == boot_id():
        _flush(transcript)
        _drop(record)
        return
    from .lock import WriterLock, held_here

    if not locked and not held_here(transcript):  # a repair rewrites the file: never beside a writer
        from ..errors import SessionLockedError

        try:
            lock = WriterLock(transcript).acquire()
        except (SessionLockedError, OSError):
            return  # a writer holds it: it settled the fork when it opened it
        try:
            settle(transcript, locked=True)
        finally:
            lock.release()
        return
    _repair(transcript, layout)
    _drop(record)


def settle_folder(folder: Path, names: Iterable[str] | None = None) -> int:
    """`settle` for every fork record directly in `folder` (the sweep: `project_upkeep.py`;
    `names`: the folder's entries when the caller has listed it already); returns how many."""
    if names is None:
        try:
            names = os.listdir(folder)
        except OSError:
            return 0
    count = 0
    for name in names:
        session_id = SessionFiles.session_of_unsynced_record(name)
        if session_id is not None:
            settle(SessionFiles(folder, session_id).transcript)
            count += 1
    return count


def _flush(transcript: Path) -> None:
    with contextlib.suppress(OSError):
        descriptor = open_regular(transcript)
        try:
            os.fdatasync(descriptor)
        finally:
            os.close(descriptor)


def _drop(record: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(record)


def _repair(transcript: Path, layout: Layout) -> None:
    """After a crash of the machine: the fork again from its source where its bytes differ (a
    source that is itself a fork not yet settled is settled first: it may have lost bytes too)."""
    if os.path.lexists(record_path(layout.source)):
        settle(layout.source)
    try:
        whole = _matches(transcript, layout)
    except OSError:
        whole = None
    if whole:
        _flush(transcript)
        return
    try:
        size = os.lstat(transcript).st_size
        if size > layout.size:  # something was appended since (another program): never overwritten
            raise _Unrepairable("it has grown since")
        source_size = os.stat(layout.source).st_size
        if any(offset + length > source_size for offset, length in layout.ranges):
            raise _Unrepairable(f"its source {layout.source} is shorter than the fork")
        _rewrite(transcript, layout)
    except (OSError, _Unrepairable) as error:
        reason = error.args[0] if isinstance(error, _Unrepairable) else f"its source cannot be read ({error.strerror})"
        sys.stderr.write(f"warning: the fork {transcript.name} may lack what a crash of the machine lost, and was "
                         f"left as it is: {reason}\n")


class _Unrepairable(Exception):
    pass


def _matches(transcript: Path, layout: Layout) -> bool:
    """Whether the transcript holds exactly its layout's bytes (the source read where they come from)."""
    if os.lstat(transcript).st_size != layout.size:
        return False
    fork = open_regular(transcript)
    try:
        if os.pread(fork, len(layout.head), 0) != layout.head:
            return False
        position = len(layout.head)
        source = open_regular(layout.source)
        try:
            for offset, length in layout.ranges:
                done = 0
                while done < length:
                    step = min(_COMPARE_CHUNK, length - done)
                    if os.pread(fork, step, position + done) != os.pread(source, step, offset + done):
                        return False
                    done += step
                position += length
        finally:
            os.close(source)
        return os.pread(fork, len(layout.tail), position) == layout.tail
    finally:
        os.close(fork)


def _rewrite(transcript: Path, layout: Layout) -> None:
    from ..storage.kernel_copy import copy_range

    temporary = transcript.with_name(f".{transcript.name}.{os.getpid()}.tmp")  # stale_temps' pattern
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)
    descriptor = open_for_write(temporary, exclusive=True)
    try:
        source = open_regular(layout.source)
        try:
            write_all(descriptor, layout.head)
            for offset, length in layout.ranges:
                copy_range(source, descriptor, offset, length)
        finally:
            os.close(source)
        write_all(descriptor, layout.tail)
        os.fsync(descriptor)
        os.rename(temporary, transcript)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    finally:
        os.close(descriptor)
    fsync_dir(transcript.parent)
