"""What one `bash` call changed, as the open checkpoint's `files` items (`source: "shell"`).

`record_changes` turns the `ShellChange`s of `ShellTracker.after_shell` into items of the
checkpoint, like edit-tool backups: a path the checkpoint already has keeps its first item (the
state before the turn) and only its after-state is noted.

Several sub-agents run at once: an edit tool may back a file up while another thread's `bash`
is running and has already changed it, so what that backup read is the command's output, not
the state before the turn. Such items (`raced`: backed up while a command ran) yield to the
state the tracker's baseline held before the commands started, when the command's change shows
it: their before-state is replaced by the baseline's, stored or absent, so the first item stays
the state before the turn and a rewind puts the file back as it was.
"""

from __future__ import annotations

from pathlib import Path

from . import compatible, shell_items
from . import store as backups
from .records import Checkpoint, FileBackup, resolve_path
from .shell_tracking import ShellChange


def record_changes(record: Checkpoint, changes: list[ShellChange], cwd: Path,
                   raced: dict[str, FileBackup]) -> None:
    """Adds the items of `changes` to `record` (one batch), correcting `raced` items (see the
    module docs)."""
    added: dict[str, FileBackup] = {}  # appended in one batch, indexed by their resolved paths
    for change in changes:
        key = resolve_path(change.path, cwd)
        item = added.get(key) or record.backup_for(key, cwd)
        if item is not None and raced.get(key) is item:
            _yield_to_baseline(item, change)
            raced.pop(key)
        if item is None:
            before = change.before
            item = added[key] = FileBackup(path=change.path, hash=None if before is None else before.content_id,
                                           algorithm=backups.BLAKE3, mode=change.mode, extra={"source": "shell"})
            if before is None and change.made_folders:
                item.extra["missingDirs"] = change.made_folders
            if change.before_item is not None:
                shell_items.note_before(item, change.before_item)
        if item.skipped is None or shell_items.is_tree(item):
            shell_items.note_after(item, change.after.content_id if change.after else None, change.after_item)
    record.add_files(list(added.items()), cwd)


def _yield_to_baseline(item: FileBackup, change: ShellChange) -> None:
    """Gives a raced edit-tool item the baseline's before-state, when that is one a rewind can
    put back (a regular file whose bytes are stored, or no file); else the item stays."""
    before = change.before
    if change.before_item is not None or (before is not None and not before.stored):
        return
    item.hash = None if before is None else before.content_id
    item.algorithm = backups.BLAKE3
    item.mode = change.mode
    item.skipped = None
    for stale in ("missingDirs", compatible.BLAKE3_KEY):  # a converted item is converted again at the next write
        item.extra.pop(stale, None)
    if before is None and change.made_folders:
        item.extra["missingDirs"] = change.made_folders
    item.extra["source"] = "shell"
