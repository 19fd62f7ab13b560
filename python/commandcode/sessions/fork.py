"""Forking a session's files: the whole tree, every branch, and its checkpoints (format §4.8).

`fork_files(source_session, target, name=)` writes a new session beside nothing the source owns:

- the transcript is a fresh header (the new id: we do not keep the parent's id as the real CLI
  does) followed by the source's body **copied by the kernel** (`copy_file_range`, a reflink
  where the file system makes one); a name adds one `session_info` entry under the source's
  leaf. `fork_opening` (every fork the product makes) copies the body verbatim and never scans
  the source: what it needs (the leaf, the name, a torn tail to leave out) is read from the
  file's ends while the kernel copies (`fork_ends.SourceEnds`), so a fork of any session costs
  about its copy. Lines a reader skips come along and are skipped in the fork as in the source.
  A file only a scan can place (legacy, no header first) is opened and copied range by range
  around the lines the scan skipped, whose count is returned. The body is not `fsync`ed: the
  fork's recovery record (`unsynced.py`) makes it durable, so a fork costs about a copy, not a
  copy and its write to the disk;
- the checkpoints file is copied as it is: its backups name objects of the shared store (or the
  real CLI's raw blobs, which are hard-linked into the fork's `file-history/`), so nothing is
  copied twice and a rewind in the fork restores the same bytes;
- the sub-agent runs stored beside the source (format §21) are copied beside the fork;
- the meta records the lineage (`parentSessionId`, `forkedAt`, `branchPoint`, `model`, and
  `title` + `userRenamed` when named).

The source is only read. `NewSessionFiles` makes the result all or nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from ..errors import InvalidSessionError
from ..storage.durable import write_all
from ..storage.ids import iso_now
from ..storage.jsonfmt import encode_entry, encode_line
from ..storage.kernel_copy import RangeShrankError
from ..storage.kernel_copy import copy_range as kernel_copy
from ..storage.regular import open_regular, read_if_exists
from ..values import Frozen
from .files import SessionFiles
from .fork_ends import SourceEnds
from .format import FORMAT_VERSION, build_header
from .lineage import EntryIds, NewSessionFiles, lineage_meta
from .reader import Session
from .unsynced import Layout, boot_id, write_record

_HEADER_PROBE = 1 << 16


class CopyResult(Frozen):
    """A new session made from another: its files, the source's id, how many unreadable source
    lines were left out, and the source entry it branched from."""

    __slots__ = ("files", "parent_session_id", "skipped", "branch_point")
    files: SessionFiles
    parent_session_id: str
    skipped: int
    branch_point: str | None

    def __init__(self, files: SessionFiles, parent_session_id: str, skipped: int, branch_point: str | None) -> None:
        self._set(files=files, parent_session_id=parent_session_id, skipped=skipped, branch_point=branch_point)


def body_ranges(session: Session) -> list[tuple[int, int]]:
    """The `(offset, length)` byte ranges of the source transcript after its header line, without
    the lines the scan skipped (each with its newline), as scanned (bytes appended since are not
    part of the fork)."""
    size = session.scanned_size
    start = _header_end(session) if not session.header.synthesized else 0
    ranges: list[tuple[int, int]] = []
    for skipped in session.skipped_lines:
        if skipped.offset < start:
            continue
        if skipped.offset > start:
            ranges.append((start, skipped.offset - start))
        start = min(size, skipped.offset + skipped.length + 1)
    if size > start:
        ranges.append((start, size - start))
    return ranges


def _header_end(session: Session) -> int:
    """The offset just past the header line's newline (the header is line `header.line`)."""
    wanted = session.header.line or 1
    descriptor = open_regular(session.path)
    try:
        offset, line = 0, 1
        while True:
            chunk = os.pread(descriptor, _HEADER_PROBE, offset)
            if not chunk:
                return offset
            position = 0
            while True:
                newline = chunk.find(b"\n", position)
                if newline < 0:
                    break
                if line == wanted:
                    return offset + newline + 1
                line, position = line + 1, newline + 1
            offset += len(chunk)
    finally:
        os.close(descriptor)


def copy_range(source: int, target: int, offset: int, length: int, *, durable: bool = True) -> None:
    """Appends `length` bytes of the transcript `source` from `offset` to `target`
    (`storage.kernel_copy.copy_range`: in the kernel, its write-back started as it goes when the
    caller will `fsync` it: `durable`).

    Raises:
        InvalidSessionError: the transcript shrank under the copy.
        OSError: a read or write failed.
    """
    try:
        kernel_copy(source, target, offset, length, writeback=durable)
    except RangeShrankError:
        raise InvalidSessionError("the transcript shrank while it was being copied; nothing was forked") from None


def fork_files(session: Session, target: SessionFiles, *, name: str | None = None,
               user_named: bool = True) -> CopyResult:
    """Forks `session` (opened by the caller) into the new session `target`; `name` (a
    `session_info` entry and `meta.title`, with `userRenamed` when `user_named`) names it.

    Raises:
        FileExistsError: `target` exists already (nothing was touched).
        InvalidSessionError: the source changed under the copy (nothing was left behind).
        OSError: a file could not be read or written (nothing was left behind).
    """
    return _fork(session.files, target, lambda: session, lambda _: (name, user_named), early=False)


Naming = Callable[[str | None], tuple[str | None, bool]]
"""The source's name → the fork's name, and whether the user chose it."""


def fork_opening(source: SessionFiles, target: SessionFiles, opener: Callable[[], Session],
                 naming: Naming) -> CopyResult:
    """`fork_files` of the session `source` holds, without scanning it: the kernel copies the
    transcript verbatim while the core reads what the fork needs from its ends
    (`fork_ends.SourceEnds`: the leaf, the name, where a torn tail starts). Lines a reader skips
    come along as they are (every reader skips them in the fork as in the source); a torn tail
    stays out. Where only a scan can be sure (a legacy file, no header first), `opener` opens the
    session and the fork is made as `fork_files` makes it. `naming(source name)` gives the fork's
    name and whether the user chose it.

    Raises:
        as `fork_files`, and whatever `opener` or `naming` raise (nothing is left behind).
    """
    return _fork(source, target, opener, naming, early=True)


def _fork(source: SessionFiles, target: SessionFiles, opener: Callable[[], Session], naming: Naming, *,
          early: bool) -> CopyResult:
    boot = boot_id()  # None: no boot id to settle the body by, so the fork waits for the disk
    with NewSessionFiles(target) as new:
        descriptor = new.open_transcript()
        try:
            copy = EarlyBody.begin(source.transcript, descriptor, target.session_id, durable=boot is None) \
                if early else None
            ends = copy.source_ends(source) if copy is not None else None
            origin: Session | SourceEnds
            if copy is not None and ends is not None:
                origin, head = ends, copy.head
                ranges = [(ends.body_start, ends.body_end - ends.body_start)] if ends.body_end > ends.body_start else []
                if ends.body_end < copy.end:  # a torn tail: the scan would leave it out
                    os.ftruncate(descriptor, len(head) + ends.body_end - ends.body_start)
                    os.lseek(descriptor, 0, os.SEEK_END)
                skipped, newline = 0, ends.adds_newline
                new_id: Callable[[], str] = ends.fresh_entry_id
            else:
                if copy is not None:  # only a scan can place the copy: the plain way, from the start
                    os.ftruncate(descriptor, 0)
                    os.lseek(descriptor, 0, os.SEEK_SET)
                session = origin = opener()
                ranges = body_ranges(session)
                head = aligned_header(encode_line(build_header(target.session_id, iso_now(), session.cwd)),
                                      ranges[0][0] if ranges else 0)
                write_all(descriptor, head)
                reader = open_regular(session.path)
                try:
                    for offset, length in ranges:
                        copy_range(reader, descriptor, offset, length, durable=boot is None)
                finally:
                    os.close(reader)
                skipped, newline = len(session.skipped_lines), _lacks_newline(session, ranges)
                new_id = EntryIds(session).new
            name, user_named = naming(origin.name)
            checkpoints = read_if_exists(source.checkpoints, follow=False)
            branch_point = origin.leaf_id
            tail = b"\n" if newline else b""
            if name:
                tail += encode_entry("session_info", new_id(), branch_point, iso_now(), {"name": name})
            if tail:
                write_all(descriptor, tail)
            if boot is None:
                os.fsync(descriptor)
            else:  # durable through its record: what a crash of the machine loses, the source gives again
                new.track(write_record(target.transcript, Layout(head, Path(os.path.abspath(origin.path)), ranges, tail), boot))
        finally:
            os.close(descriptor)
        new.link_file_history(source.file_history)
        from .subagent_copy import copy_subagent_runs  # fork imports nothing of it otherwise

        copy_subagent_runs(source, new)
        if checkpoints is not None:
            new.write_sidecar(target.checkpoints, checkpoints)
        new.write_meta(lineage_meta(origin, title=name, named=bool(name) and user_named, branch_point=branch_point))
        new.publish()
    return CopyResult(target, source.session_id, skipped, branch_point)


def _lacks_newline(session: Session, ranges: list[tuple[int, int]]) -> bool:
    """Whether the copied body ends in a valid last line without its newline."""
    if not ranges:
        return False
    offset, length = ranges[-1]
    reader = open_regular(session.path)
    try:
        return os.pread(reader, 1, offset + length - 1) != b"\n"
    finally:
        os.close(reader)


class EarlyBody:
    """The fork's transcript written before the source is scanned: a header built from the
    source's first line (its cwd), then the rest of the file copied by the kernel (and, where
    there is no boot id to settle it by, `fdatasync`ed), in a thread (both release the GIL)."""

    def __init__(self, cwd: str, head: bytes, start: int, end: int, *, durable: bool,
                 identity: tuple[int, int] = (0, 0)) -> None:
        self.cwd, self.head, self.start, self.end, self.durable = cwd, head, start, end, durable
        self.identity = identity  # (device, inode) of the file copied
        self.failed: BaseException | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def begin(cls, path: Path, descriptor: int, session_id: str, *, durable: bool) -> EarlyBody | None:
        """The copy under way, or None when the first line is no header to build on (or the
        source cannot be read: the scan says why); `durable`: `fdatasync` it too."""
        try:
            reader = open_regular(path)
        except OSError:
            return None
        try:
            head = os.pread(reader, _HEADER_PROBE, 0)
            newline = head.find(b"\n")
            cwd = _header_cwd(head[:newline]) if newline >= 0 else None
            if cwd is None:
                os.close(reader)
                return None
            head = aligned_header(encode_line(build_header(session_id, iso_now(), cwd)), newline + 1)
            status = os.fstat(reader)
            copy = cls(cwd, head, newline + 1, status.st_size, durable=durable, identity=(status.st_dev, status.st_ino))
            write_all(descriptor, head)
        except BaseException:
            os.close(reader)
            raise
        copy._thread = threading.Thread(target=copy._copy, args=(reader, descriptor), name="fork-copy", daemon=True)
        copy._thread.start()
        return copy

    def _copy(self, reader: int, descriptor: int) -> None:
        try:
            copy_range(reader, descriptor, self.start, self.end - self.start, durable=self.durable)
            if self.durable:
                os.fdatasync(descriptor)
        except BaseException as error:  # the plain copy after the scan meets it again, or not
            self.failed = error
        finally:
            os.close(reader)

    def source_ends(self, source: SessionFiles) -> SourceEnds | None:
        """What the fork needs of the source, read from its ends while the kernel copies (the
        copy is waited for), when the copy is the one they ask for: None when only a scan can
        be sure, or the copy failed (the plain copy after the scan meets its error again)."""
        try:
            ends = SourceEnds.read(source, self.end)
        finally:
            if self._thread is not None:
                self._thread.join()
        if ends is None or self.failed is not None or not self._same_file(source.transcript):
            return None  # (a file put in the source's place meanwhile: its ends are not the copy's)
        return ends if (ends.cwd, ends.body_start) == (self.cwd, self.start) else None

    def _same_file(self, path: Path) -> bool:
        try:
            status = os.stat(path)
        except OSError:
            return False
        return (status.st_dev, status.st_ino) == self.identity


def aligned_header(line: bytes, offset: int) -> bytes:
    """The fork's header line, padded with spaces before its closing brace (JSON whitespace) to
    end at `offset`, where the body starts in the source, when it is shorter: the kernel copies a
    body whose offsets in the source and in the fork are equal about 1.4 times as fast (measured
    on ext4: 1 GB in 0.30 s against 0.42-0.68 s). A longer line is left as it is."""
    short = offset - len(line)
    if short <= 0 or not line.endswith(b"}\n"):
        return line
    return line[:-2] + b" " * short + b"}\n"


def _header_cwd(line: bytes) -> str | None:
    """The `cwd` of a v3 header line (None: not one)."""
    import json

    try:
        header = json.loads(line)
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("type") != "session" or header.get("version") != FORMAT_VERSION:
        return None
    cwd = header.get("cwd")
    return cwd if isinstance(cwd, str) else None
