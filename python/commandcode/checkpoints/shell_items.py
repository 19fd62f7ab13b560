"""What a `bash` command does besides regular files: the symlinks, FIFOs, sockets and empty
folders it creates, removes or puts in a file's place (`shell_tracking.py` tracks the regular
files). Device nodes are never tracked (only root can make one again): `devices` names the ones
a command made or removed, for a warning line.

Owns:

- **The snapshot** (`scan`): every symlink (with its target), FIFO, socket and hollow folder (one whose
  whole subtree holds only folders) of the project, from the native no-follow walk
  (`store.scan_tree_items`), taken before a `bash` call and again after it; `changed` lists the
  paths whose item differs. Inside a repository the paths git ignores are left out (`visible`),
  as they are for files.
- **The record keys** (format §6): `kind`/`link` on an item whose state before the command was
  such an item (`hash: null`), `afterKind`/`afterLink` for what the command left (`afterHash:
  null`). Every item that names one also carries `skipped` (`"symlink"`, else `"not_regular"`),
  so the real CLI, which leaves skipped items alone, never deletes a folder or writes a file
  through a link; commandcode restores it from the keys.
- **What a rewind asks the restore** for such an item (`want`, `expect`): the native restore
  makes the symlink, FIFO or folder through a temp beside it, never following a link.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from typing import Literal, cast

from . import store as backups

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .records import FileBackup

Kind = Literal["symlink", "fifo", "socket", "folder"]
TreeState = tuple[Kind, str | None, int]
"""(kind, symlink target or None, permission bits) of one item."""

KIND, LINK, AFTER_KIND, AFTER_LINK = "kind", "link", "afterKind", "afterLink"
KINDS = frozenset({"symlink", "fifo", "socket", "folder"})
DEVICE = "device"
SKIPPED_SYMLINK, SKIPPED_NOT_REGULAR = "symlink", "not_regular"


def scan(cwd: str, excluded: Iterable[str]) -> tuple[dict[str, TreeState], frozenset[str]]:
    """The project's items by absolute path, and its device nodes apart (never tracked)."""
    from pathlib import Path

    items: dict[str, TreeState] = {}
    devices = []
    for path, kind, link, mode in backups.scan_tree_items(Path(cwd), [Path(folder) for folder in excluded]):
        if kind in KINDS:
            items[path] = (cast(Kind, kind), link, mode)
        else:
            devices.append(path)
    return items, frozenset(devices)


def _same(a: TreeState | None, b: TreeState | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a[:2] == b[:2])


def changed(before: dict[str, TreeState], after: dict[str, TreeState]) -> list[tuple[str, TreeState | None, TreeState | None]]:
    """`(path, before, after)` of every path whose item differs (a symlink by its target)."""
    return [(path, before.get(path), after.get(path)) for path in sorted(before.keys() | after.keys())
            if not _same(before.get(path), after.get(path))]


def filled(before: TreeState | None, after: TreeState | None, path: str) -> bool:
    """Whether an empty folder only stopped being hollow (the command put something in it, the
    folder itself stayed): no change of the folder, whose new contents are tracked on their own."""
    return before is not None and before[0] == "folder" and after is None and os.path.isdir(path) \
        and not os.path.islink(path)


def visible(cwd: str, paths: list[str]) -> set[str]:
    """The paths git does not ignore (all of them when git cannot tell)."""
    if not paths:
        return set()
    try:
        completed = subprocess.run(["git", "-C", cwd, "check-ignore", "-z", "--stdin"], capture_output=True,
                                   input=b"\0".join(os.fsencode(path) for path in paths), timeout=60)
    except (OSError, subprocess.SubprocessError):
        return set(paths)
    if completed.returncode not in (0, 1):
        return set(paths)
    ignored = {os.path.normpath(os.path.join(cwd, os.fsdecode(name))) for name in completed.stdout.split(b"\0") if name}
    return {path for path in paths if path not in ignored}


def _state(kind: object, link: object, mode: object) -> TreeState | None:
    if kind not in KINDS or (kind == "symlink" and not isinstance(link, str)):
        return None
    bits = mode if isinstance(mode, int) and not isinstance(mode, bool) else (0o755 if kind == "folder" else 0o644)
    return cast(Kind, kind), link if kind == "symlink" and isinstance(link, str) else None, bits


def before_of(item: FileBackup) -> TreeState | None:
    """The item a record names as the path's state before its turn (None: a file, or nothing)."""
    return _state(item.extra.get(KIND), item.extra.get(LINK), item.mode) if KIND in item.extra else None


def after_of(item: FileBackup) -> TreeState | None:
    """The item the turn's command left at the path (None: a file, nothing, or unknown)."""
    return _state(item.extra.get(AFTER_KIND), item.extra.get(AFTER_LINK), None) if AFTER_KIND in item.extra else None


def is_tree(item: FileBackup) -> bool:
    """Whether the item names a symlink, FIFO or folder before or after its turn."""
    return KIND in item.extra or AFTER_KIND in item.extra


def _mark_skipped(item: FileBackup) -> None:
    kinds = {item.extra.get(KIND), item.extra.get(AFTER_KIND)} - {None}
    if kinds:
        item.skipped = SKIPPED_SYMLINK if "symlink" in kinds else SKIPPED_NOT_REGULAR


def note_before(item: FileBackup, state: TreeState | None) -> None:
    """Records `state` as the item's state before its turn (nothing when it was a file or none)."""
    if state is None:
        return
    kind, link, mode = state
    item.hash, item.extra[KIND] = None, kind
    if link is not None:
        item.extra[LINK] = link
    item.mode = None if kind == "symlink" else mode
    _mark_skipped(item)


def note_after(item: FileBackup, content_id: str | None, state: TreeState | None) -> None:
    """Records what the command left: a file's blake3, nothing (both None), or an item."""
    item.after_known, item.after_hash = True, content_id
    if state is None and KIND not in item.extra and AFTER_KIND not in item.extra:
        item.skipped = None  # a file before and after (or none): the common case, kept cheap
        return
    item.extra.pop(AFTER_KIND, None)
    item.extra.pop(AFTER_LINK, None)
    if state is not None:
        item.extra[AFTER_KIND] = state[0]
        if state[1] is not None:
            item.extra[AFTER_LINK] = state[1]
    if KIND not in item.extra and state is None:
        item.skipped = None
    _mark_skipped(item)


def want(item: FileBackup) -> dict[str, object]:
    """The `RestoreTarget` keywords that put the item's before-state back (none for a file)."""
    state = before_of(item)
    if state is None:
        return {}
    kind, link, mode = state
    return {"kind": kind, "link": link, "mode": None if kind == "symlink" else mode, "digest": None}


def expect(item: FileBackup) -> dict[str, object] | None:
    """The `RestoreTarget` keywords of what the item's command left, when that is an item."""
    state = after_of(item)
    if state is None:
        return None
    return {"expected": state[0], "expected_link": state[1]}


def current(path: str) -> TreeState | None:
    """What is at `path` now, when it is a symlink, FIFO or socket (never followed)."""
    import stat

    try:
        status = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(status.st_mode):
        try:
            return "symlink", os.readlink(path), 0o777
        except OSError:
            return None
    if stat.S_ISFIFO(status.st_mode):
        return "fifo", None, stat.S_IMODE(status.st_mode)
    if stat.S_ISSOCK(status.st_mode):
        return "socket", None, stat.S_IMODE(status.st_mode)
    return None


def remove_hollow(folders: Iterable[str], cwd: str) -> list[str]:
    """Removes, innermost first, the folders a command created, each while it is empty and
    really inside `cwd` (a symlinked parent is never followed out). Returns the removed ones."""
    root = os.path.realpath(cwd)
    removed = []
    for folder in sorted(set(folders), key=lambda name: name.count(os.sep), reverse=True):
        parent = os.path.realpath(os.path.dirname(folder))
        if parent != root and not parent.startswith(root + os.sep):
            continue
        try:
            os.rmdir(folder)
        except OSError:
            continue  # not empty, gone, or not a folder (a symlink is never followed): left alone
        removed.append(folder)
    return removed
