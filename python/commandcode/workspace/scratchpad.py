"""The session scratchpad: a private temp folder per session, laid out as the real CLI lays it out.

`<base>/<sanitized cwd>/<session id>/scratchpad`, where `<base>` is `/tmp/commandcode-<uid>` (the
literal `/tmp`), or `<$COMMANDCODE_SCRATCHPAD_BASE>/commandcode-<uid>` when that is an absolute
path (reference format §7). The cwd becomes one folder name: every character outside
`[A-Za-z0-9]` is `-`; a result that is empty or over 200 characters is its first 200 (or
`root`), `-` and 8 characters of base64url(sha256(cwd)).

Safety on a shared `/tmp`: every folder from the base down is created 0700 and opened without
following symlinks, and must be a real folder owned by this user; anything else (a planted
symlink, another user's folder, a file where a folder goes) turns the feature off for the session
with one notice, and the session runs normally (fail-open). `"disableScratchpad": true` in
settings turns it off silently.

Owns: the path rules, provisioning (`provision`), `is_in_scratchpad` (for the permission engine:
reads and writes inside need no prompt), the bounded post-compaction manifest
(`scratchpad_manifest`), the fork copy (`copy_scratchpad`), deletion with a session
(`delete_scratchpad`) and the 30-day sweep (`sweep_scratchpads`).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..config.env import scratchpad_base, scratchpad_export

RETENTION_DAYS = 30
CWD_KEEP = 200
HASH_CHARS = 8
FOLDER_MODE = 0o700
MANIFEST_ENTRIES = 50
MANIFEST_BYTES = 8000
MANIFEST_DEPTH = 8
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

Notify = Callable[[str], None]


class UnsafeScratchpad(Exception):
    """A folder on the way to the scratchpad is not a real folder of this user (the message says which)."""


def sanitize_cwd(cwd: str) -> str:
    """The real CLI's folder name for a working directory."""
    name = _NOT_ALNUM.sub("-", cwd)
    if name and len(name) <= CWD_KEEP:
        return name
    digest = base64.urlsafe_b64encode(hashlib.sha256(cwd.encode("utf-8", "surrogateescape")).digest()).decode()
    return f"{name[:CWD_KEEP] or 'root'}-{digest[:HASH_CHARS]}"


def base_dir() -> str:
    """`/tmp/commandcode-<uid>`, or `<$COMMANDCODE_SCRATCHPAD_BASE>/commandcode-<uid>`."""
    return os.path.join(scratchpad_base() or "/tmp", f"commandcode-{os.getuid()}")


def project_scratch_dir(cwd: str) -> str:
    """The folder holding the scratchpads of every session of `cwd`."""
    return os.path.join(base_dir(), sanitize_cwd(cwd))


def scratchpad_path(session_id: str, cwd: str) -> str | None:
    """Where the scratchpad of a session is, or None when the real CLI would have none (an id
    it does not accept, a relative cwd)."""
    if not _SESSION_ID.match(session_id) or not os.path.isabs(cwd):
        return None
    return os.path.join(project_scratch_dir(cwd), session_id, "scratchpad")


# --------------------------------------------------------------------------------------------
# Walking the folders safely


def _open_child(parent: int, name: str, *, create: bool) -> int:
    """Opens (creating it 0700 when `create`) the folder `name` in `parent`, never through a
    symlink; it must be a folder this user owns."""
    if create:
        try:
            os.mkdir(name, FOLDER_MODE, dir_fd=parent)
        except FileExistsError:
            pass
    try:
        descriptor = os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
    except OSError as error:
        status = _lstat_at(parent, name)
        if status is not None and stat.S_ISLNK(status.st_mode):
            raise UnsafeScratchpad(f"{name} is a symlink") from None
        if status is not None and not stat.S_ISDIR(status.st_mode):
            raise UnsafeScratchpad(f"{name} is not a folder") from None
        raise UnsafeScratchpad(f"{name}: {error.strerror}") from None
    status = os.fstat(descriptor)
    if status.st_uid != os.getuid():
        os.close(descriptor)
        raise UnsafeScratchpad(f"{name} belongs to another user (uid {status.st_uid})")
    return descriptor


def _lstat_at(parent: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return None


def _walk(path: str, *, create: bool) -> int:
    """Opens the folder `path` below the base's parent, checking every folder from the base down.
    Returns its descriptor. The base's own parent (`/tmp`) is the system's and is only opened."""
    base = base_dir()
    relative = os.path.relpath(path, os.path.dirname(base))
    if relative.startswith(".."):
        raise UnsafeScratchpad(f"{path} is not under {base}")
    try:
        if create and scratchpad_base() is not None:
            os.makedirs(os.path.dirname(base), exist_ok=True)  # `mkdir -p` of $COMMANDCODE_SCRATCHPAD_BASE
        current = os.open(os.path.dirname(base), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise UnsafeScratchpad(f"{os.path.dirname(base)}: {error.strerror}") from None
    try:
        for name in relative.split(os.sep):
            child = _open_child(current, name, create=create)
            os.close(current)
            current = child
            if create:
                os.fchmod(current, FOLDER_MODE)
        return current
    except BaseException:
        os.close(current)
        raise


def _safe(path: str, *, create: bool, notify: Notify | None = None, refusal: str = "") -> bool:
    """Whether every folder from the base down to `path` is (or, `create`, was made) a real
    folder of this user; when not, `notify` gets `refusal` and why."""
    try:
        os.close(_walk(path, create=create))
    except UnsafeScratchpad as error:
        if notify is not None:
            notify(f"{refusal}: {error} (under {base_dir()})")
        return False
    return True


# --------------------------------------------------------------------------------------------
# The scratchpad of a session


@dataclass(frozen=True)
class Scratchpad:
    """A provisioned scratchpad: its folder (`path`)."""

    path: str

    def contains(self, target: str | os.PathLike[str]) -> bool:
        """Whether `target` (symlinks resolved) lies inside this scratchpad."""
        return is_in_scratchpad(target, self.path)

    def env(self) -> dict[str, str]:
        """`$COMMANDCODE_SCRATCHPAD` for the tools' shell commands."""
        return scratchpad_export(self.path)

    def prompt(self) -> str:
        """The lines that advertise the scratchpad to the model."""
        return scratchpad_prompt(self.path)


def provision(session_id: str, cwd: str, *, disabled: bool = False, notify: Notify | None = None) -> Scratchpad | None:
    """Creates the session's scratchpad (0700, every folder on the way checked), or returns None:
    disabled in settings (silently), no valid path, or unsafe (`notify` gets one line why)."""
    if disabled:
        return None
    path = scratchpad_path(session_id, cwd)
    if path is None:
        return None
    if not _safe(path, create=True, notify=notify, refusal="the scratchpad is off for this session"):
        return None
    return Scratchpad(path)


def is_in_scratchpad(target: str | os.PathLike[str], scratchpad: str | None) -> bool:
    """Whether `target` lies inside the scratchpad folder `scratchpad` (both with symlinks
    resolved, so a link out of it does not count). For the permission engine: reads and writes in
    the scratchpad need no prompt (explicit deny and ask rules still apply first)."""
    if not scratchpad:
        return False
    root = os.path.realpath(scratchpad)
    real = os.path.realpath(os.fspath(target))
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def scratchpad_prompt(path: str) -> str:
    """How the model is told about its scratchpad (for the system prompt): the first line is
    `Scratchpad: <path>` (`agent.system_prompt.SCRATCHPAD_LINE`)."""
    return (f"Scratchpad: {path}\n"
            "That folder (also $COMMANDCODE_SCRATCHPAD in shell commands) is this session's private temp folder for "
            "intermediate files — notes, throwaway scripts, generated data — that do not belong in the project. "
            "Reading and writing files there needs no permission. It is deleted with the session and after 30 days; "
            "keep deliverables in the project.")


# --------------------------------------------------------------------------------------------
# After a compaction: what is in it


def _names(folder: str) -> list[str]:
    """The sorted names in `folder` ([] when it cannot be listed)."""
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _entries(root: str, depth: int) -> Iterator[tuple[str, os.stat_result]]:
    """`(relative path, lstat)` of everything under `root`, sorted, at most `depth` folders deep;
    symlinks are listed, never followed."""
    def visit(folder: str, prefix: str, level: int) -> Iterator[tuple[str, os.stat_result]]:
        for name in _names(folder):
            path = os.path.join(folder, name)
            try:
                status = os.lstat(path)
            except OSError:
                continue
            relative = f"{prefix}{name}"
            yield relative, status
            if stat.S_ISDIR(status.st_mode) and level < depth:
                yield from visit(path, relative + "/", level + 1)
    yield from visit(root, "", 1)


def _describe(relative: str, status: os.stat_result) -> str:
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(status.st_mtime))
    if stat.S_ISDIR(status.st_mode):
        return f"- {relative}/ (folder, modified {when})"
    if stat.S_ISLNK(status.st_mode):
        return f"- {relative} (symlink, modified {when})"
    return f"- {relative} ({status.st_size:,} bytes, modified {when})"


def scratchpad_manifest(path: str | None, *, max_entries: int = MANIFEST_ENTRIES, max_bytes: int = MANIFEST_BYTES,
                        max_depth: int = MANIFEST_DEPTH) -> str | None:
    """The metadata-only manifest of a scratchpad put back into the context after a compaction:
    names, sizes and times, at most `max_entries` entries, `max_bytes` bytes (UTF-8) and
    `max_depth` folders deep; a last line says how many more were left out. None when there is no
    scratchpad or it is empty."""
    if not path or not os.path.isdir(path) or os.path.islink(path):
        return None
    header = f"Files in the session scratchpad {path} (names, sizes and times only; read them again as needed):"
    lines = [header]
    size = len(header.encode("utf-8", "surrogateescape"))
    shown = total = 0
    for relative, status in _entries(path, max_depth):
        total += 1
        if shown >= max_entries:
            continue
        line = _describe(relative, status)
        cost = len(line.encode("utf-8", "surrogateescape")) + 1
        if size + cost > max_bytes - 64:  # room for the closing line
            shown = max_entries  # stop listing; keep counting
            continue
        lines.append(line)
        size += cost
        shown += 1
    if total == 0:
        return None
    listed = len(lines) - 1
    if total > listed:
        lines.append(f"- … and {total - listed} more not listed")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Copies, deletion and the 30-day sweep


def copy_scratchpad(source_id: str, destination_id: str, cwd: str, *, notify: Notify | None = None) -> bool:
    """Copies a session's scratchpad into a fork's (made at launch with `--fork-session`):
    files, folders and symlinks as they are (links are copied, not followed). Returns whether
    anything was copied."""
    source = scratchpad_path(source_id, cwd)
    if source is None or not os.path.isdir(source) or os.path.islink(source):
        return False
    if not _safe(source, create=False, notify=notify, refusal=f"the scratchpad of {source_id} was not copied"):
        return False
    target = provision(destination_id, cwd, notify=notify)
    if target is None:
        return False
    shutil.copytree(source, target.path, symlinks=True, dirs_exist_ok=True)
    return True


def _remove_session_folder(project_folder: str, name: str) -> int:
    """Removes `<project folder>/<name>` (a session's folder) if it is ours; returns bytes freed."""
    path = os.path.join(project_folder, name)
    if not _safe(path, create=False):
        return 0
    freed = folder_bytes(path)
    shutil.rmtree(path, ignore_errors=True)  # rmtree never follows a symlink inside
    return freed


def delete_scratchpad(session_id: str, cwd: str) -> int:
    """Deletes a session's scratchpad folder (with the session); returns the bytes freed."""
    if scratchpad_path(session_id, cwd) is None:
        return 0
    return _remove_session_folder(project_scratch_dir(cwd), session_id)


def folder_bytes(path: str, *, links_once: bool = False) -> int:
    """The bytes of the regular files under `path` (symlinks not followed); with `links_once`, a
    file with several hard links counts once (as `du -sb` counts)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                status = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if not stat.S_ISREG(status.st_mode):
                continue
            if links_once and status.st_nlink > 1:
                if (status.st_dev, status.st_ino) in seen:
                    continue
                seen.add((status.st_dev, status.st_ino))
            total += status.st_size
    return total


def _newest_mtime(path: str) -> float:
    newest = os.lstat(path).st_mtime
    for folder, folders, names in os.walk(path):
        for name in folders + names:
            try:
                newest = max(newest, os.lstat(os.path.join(folder, name)).st_mtime)
            except OSError:
                continue
    return newest


def stale_scratchpads(*, keep: frozenset[str] = frozenset(), now: float | None = None,
                      days: int = RETENTION_DAYS, cwd: str | None = None) -> list[tuple[str, str, int]]:
    """`(project folder, session id, bytes)` of every scratchpad under the base (only `cwd`'s,
    when given) untouched for more than `days` days (judged by the newest time of anything
    inside), except the `keep` ids."""
    base = base_dir()
    moment = time.time() if now is None else now
    found: list[tuple[str, str, int]] = []
    projects = [sanitize_cwd(cwd)] if cwd is not None else _names(base)
    for project in projects if _safe(base, create=False) else []:
        folder = os.path.join(base, project)
        if os.path.islink(folder) or not os.path.isdir(folder):
            continue
        for session_id in _names(folder):
            path = os.path.join(folder, session_id)
            if session_id in keep or os.path.islink(path) or not os.path.isdir(path):
                continue
            try:
                if moment - _newest_mtime(path) > days * 86400:
                    found.append((folder, session_id, folder_bytes(path)))
            except OSError:
                continue
    return found


def sweep_scratchpads(*, keep: frozenset[str] = frozenset(), now: float | None = None,
                      days: int = RETENTION_DAYS, dry_run: bool = False, cwd: str | None = None) -> tuple[int, int]:
    """Removes the scratchpads `stale_scratchpads` names; returns `(folders, bytes)` removed
    (or, with `dry_run`, that would be). A session start sweeps its own project's (`cwd`), as
    the real CLI does; `commandcode sweep` sweeps them all."""
    stale = stale_scratchpads(keep=keep, now=now, days=days, cwd=cwd)
    if dry_run:
        return len(stale), sum(size for _, _, size in stale)
    freed = 0
    for folder, session_id, _ in stale:
        freed += _remove_session_folder(folder, session_id)
    return len(stale), freed
