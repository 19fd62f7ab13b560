"""Where an export goes, and writing it there whole or not at all.

Naming follows the real CLI: `command-code-session-<first 8 of id>.<ext>` in the working
directory; a folder gets that name; a file's extension picks the format (`.html`, `.md`,
`.jsonl`) and any other is refused. `Output` streams the document into a hidden temporary file
beside the target (`.<name>.<pid>.<nonce>.tmp`, created exclusively), fsyncs it and renames it
over the target: a failure (or a kill) leaves the target as it was, and a folder that cannot
be written is an error naming the target, never the temporary file. A temporary file a killed
export left behind is removed by the next export to that folder.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from ..errors import CommandcodeError, UsageError
from ..storage.durable import check_replaceable, fsync_dir, told_of, write_all
from ..storage.regular import open_regular

FORMATS = ("html", "md", "jsonl")
_STALE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp$")


def default_name(session_id: str, fmt: str) -> str:
    return f"command-code-session-{session_id[:8]}.{fmt}"


def resolve_target(session_id: str, cwd: Path, *, path: str | None, fmt: str | None, default_format: str) -> tuple[Path, str]:
    """The file and format of an export: `path` (a file or a folder; `~` expanded; relative to
    `cwd`) and `fmt` as given, else the defaults.

    Raises:
        UsageError: an unknown format or extension, or a format that contradicts the extension.
        CommandcodeError: the folder does not exist.
    """
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}", hint="use html, md or jsonl")
    if path is None or path == "":
        chosen = fmt or default_format
        return cwd / default_name(session_id, chosen), chosen
    target = Path(os.path.expanduser(path))
    if not target.is_absolute():
        target = cwd / target
    if path.endswith(os.sep) or target.is_dir():
        if not target.is_dir():
            raise CommandcodeError(f"{target}: no such folder", hint="create the folder first, or name another one")
        chosen = fmt or default_format
        return target / default_name(session_id, chosen), chosen
    extension = target.suffix[1:].lower()
    if extension not in FORMATS:
        shown = target.suffix or "no extension"
        raise UsageError(f"cannot export to {target.name}: {shown} is not an export format",
                         hint="name a .html, .md or .jsonl file, or a folder")
    if fmt is not None and fmt != extension:
        raise UsageError(f"--format {fmt} contradicts the file name {target.name}", hint="leave one of them out")
    if not target.parent.is_dir():
        raise CommandcodeError(f"{target.parent}: no such folder", hint="create the folder first, or name another one")
    return target, extension


def spool_beside(target: Path) -> IO[bytes]:
    """An unnamed temporary file in the target's folder (where the export's own bytes may go).

    Raises:
        OSError: the folder cannot be written, naming `target`.
    """
    try:
        return tempfile.TemporaryFile(mode="w+b", dir=os.path.dirname(os.fspath(target)) or ".")
    except OSError as error:
        raise told_of(target, error) from None


class Output:
    """A target file written through a temporary one: `write` text or bytes, and the rename
    happens when the `with` block ends without an error (else the temporary file goes)."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.bytes_written = 0
        self._descriptor = -1
        self._temporary = ""

    def __enter__(self) -> Output:
        target = os.fspath(self.target)
        check_replaceable(target)
        folder, name = os.path.split(target)
        _remove_stale(folder or ".", name)
        try:
            like: os.stat_result | None = os.stat(target)
        except FileNotFoundError:
            like = None
        umask = os.umask(0)
        os.umask(umask)
        mode = stat.S_IMODE(like.st_mode) if like is not None and stat.S_ISREG(like.st_mode) else 0o666 & ~umask
        self._temporary = os.path.join(folder, f".{name[:200]}.{os.getpid()}.{time.monotonic_ns() & 0xFFFFFFFF:08x}.tmp")
        try:
            self._descriptor = open_regular(self._temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except OSError as error:
            raise told_of(self.target, error) from None
        return self

    def write(self, data: str | bytes) -> None:
        chunk = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
        write_all(self._descriptor, chunk)
        self.bytes_written += len(chunk)

    @property
    def descriptor(self) -> int:
        return self._descriptor

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        try:
            if kind is None:
                os.fsync(self._descriptor)
        except BaseException:
            self._discard()
            raise
        os.close(self._descriptor)
        if kind is not None:
            self._discard(closed=True)
            return
        try:
            os.replace(self._temporary, self.target)
        except BaseException:
            self._discard(closed=True)
            raise
        fsync_dir(os.path.dirname(os.fspath(self.target)) or ".")

    def _discard(self, *, closed: bool = False) -> None:
        if not closed:
            try:
                os.close(self._descriptor)
            except OSError:
                pass
        try:
            os.unlink(self._temporary)
        except OSError:
            pass


def _remove_stale(folder: str, name: str) -> None:
    """Removes `.<name>.<pid>.<nonce>.tmp` files an export killed before its rename left behind."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        match = _STALE.match(entry)
        if match is None or match.group("name") != name[:200]:
            continue
        pid = int(match.group("pid"))
        try:
            os.kill(pid, 0)
            continue  # its writer is still running
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue
        try:
            os.unlink(os.path.join(folder, entry))
        except OSError:
            pass
