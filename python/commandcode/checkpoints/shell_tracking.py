"""Shell commands are undone too: a baseline of the project in the store, kept current by stat.

Owns `ShellTracker` (setting `checkpoints.trackShell`, default on). The project's files are the
ones git does not ignore (`git ls-files -co --exclude-standard`; every file outside a
repository), regular files under the 10 MB cap, at most `checkpoints.trackShellMaxFiles`.

- **Baseline**: each file's bytes go into the content store (stored once, shared with every
  backup) and its stat key (size, mtime_ns, inode, mode) into a cache. It is taken in a
  background thread started when a turn opens, so it runs while the first model call does;
  later turns only re-read the files whose stat key changed (other programs' edits between
  turns). The stat passes are native (`store.StatTable`: walk, parallel stat, compare; only the
  changed paths come back); the passes around a `bash` call look only at the paths the
  table's inotify folder watches saw change (every background pass still stats every file,
  so a change no event reports, on a network file system say, is found by the next turn). The cache is kept in the session's `<sid>.shell-baseline.json`
  (`shell_baseline.py`), so the next `-p` process of the session does not take it again, and
  so the store's garbage collection keeps the baseline's objects.
- **Before a `bash` call** the baseline is finished first (correctness before speed, also in
  `-p`) and the cache brought current; **after it**, a second stat pass (with a fresh listing,
  for created files) finds what the command created, changed or deleted, and one native call
  hashes all of them in parallel (`inspect_files`). Their previous bytes are already stored, so
  the manager records them like edit-tool backups (`source: "shell"`), a created file with the
  folders the command made for it (a rewind removes them when empty). The symlinks, FIFOs,
  sockets and empty folders it created, removed or put in a file's place are found by comparing
  two native walks, before and after the call (`shell_items.py`), and recorded in the same
  items; the walks skip the folders git ignores whole (`node_modules/`: nothing in them is
  tracked, as git's listing has none of their files), and a device node the command made or
  removed gets a notice (only root could make one again).
- **Closing** (`stop`, from `AgentSession.close` or at exit) stops a background pass at the
  next file, joins its thread and writes the sidecar.
- **GC roots**: every object the cache counts on is a live root of the store's garbage
  collection while this process runs (`gc_roots.py`), however old it is: a record names it only
  once a command changes its file; between processes, the sidecar names them.
- **Limits**: more files than the maximum, or a store past `checkpoints.maxStoreBytes`, pause
  tracking for the session with one notice; a turn never fails because of tracking.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..config.paths import data_dir
from ..storage.durable import is_replace_temporary
from . import shell_baseline, shell_items
from . import store as backups
from .background import Worker
from .gc_roots import LiveRoots

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config.context import ProjectContext

StatKey = tuple[int, int, int, int]
"""(size, mtime_ns, inode, mode) of a regular file (a `chmod` changes only the mode)."""

DEFAULT_MAX_FILES = 50_000
PARALLEL_FROM = 32  # files to store at once before the baseline uses threads
STORE_THREADS = 4


class Entry:
    """What the cache knows of one file: its stat key, content id and mode, and whether its
    bytes are in the store yet (what a command left is stored in the background, while the
    next model call runs; `before_shell` finishes it before the next command)."""

    __slots__ = ("content_id", "key", "mode", "stored")

    def __init__(self, key: StatKey, content_id: str, mode: int, *, stored: bool = True) -> None:
        self.key, self.content_id, self.mode, self.stored = key, content_id, mode, stored


class ShellChange:
    """One path a shell command changed: the regular file before (`None`: none there) and after
    (`None`: none left), and the symlink, FIFO or empty folder there before and after, if any."""

    __slots__ = ("after", "after_item", "before", "before_item", "made_folders", "mode", "path")

    def __init__(self, path: str, before: Entry | None, after: Entry | None, made_folders: list[str] | None = None) -> None:
        self.path, self.before, self.after = path, before, after
        self.mode = before.mode if before is not None else None
        self.made_folders = made_folders or []  # a created file: the folders the command made for it
        self.before_item: shell_items.TreeState | None = None
        self.after_item: shell_items.TreeState | None = None


class ShellTracker:
    """The baseline and stat cache of one session's project (see the module docs)."""

    def __init__(self, cwd: Path, store: backups.BackupStore, *, max_files: int = DEFAULT_MAX_FILES,
                 max_store_bytes: int | None = None, sidecar: Path | None = None) -> None:
        self.cwd = os.path.abspath(cwd)
        self.store = store
        self.max_files = max_files
        self.max_store_bytes = max_store_bytes
        self.sidecar = sidecar
        self.cache: dict[str, Entry] = {}
        self.paused: str | None = None  # why tracking stopped (reported once)
        self._reported = False
        self.worker = Worker("commandcode-shell-baseline")
        self._task: threading.Event | None = None  # the background pass queued last
        self._stop = False
        self._closed = False
        self._loaded = sidecar is None
        self._dirty = False
        self._unstored: set[str] = set()
        self._stored_bytes: int | None = None
        self._bytes_lock = threading.Lock()
        self._git: bool | None = None
        self._listing: list[str] | None = None  # git's listing at the last pass
        self._items: dict[str, shell_items.TreeState] | None = None  # symlinks, FIFOs, sockets, empty folders before a call
        self._ignored: list[str] = []  # folders git ignores whole, skipped by the item walks
        self._devices: frozenset[str] = frozenset()  # device nodes before a call (never tracked)
        self._pinned: list[str] = []  # the project's folders before the running commands (`before_shell`)
        self._notices: list[str] = []
        excluded = os.path.abspath(data_dir())
        self._excluded = excluded
        self._table = backups.StatTable(self.cwd, [excluded], backups.MAX_BACKUP_SIZE)
        self.roots = LiveRoots(store.root)  # the baseline's objects stay collectable only once no record needs them

    # ---- listing

    def _scan(self, *, full: bool) -> list[tuple[str, StatKey | None]] | None:
        """The files whose stat key differs from the table's (`None` key: gone or no longer a
        regular file under the cap), or None when there are too many (tracking pauses). Inside
        a repository the listing is git's; outside, the native walk re-reads only the folders
        whose mtime changed. A `full` pass stats every file (the background passes); otherwise,
        once the native folder watches are trusted, only the paths their events name (around a
        `bash` call)."""
        names: list[str] | None = None
        if self._git is not False:
            if not full and self._listing is not None and not self._table.structure_changed():
                names = self._listing  # no file created, deleted or moved, no .gitignore or index change
            else:
                # the listings run at once (three git processes: a first baseline waits for them)
                files = self._git_start(["-co", "--exclude-standard"])
                if full:
                    untracked = self._git_start(["-o", "--directory", "--exclude-standard"])
                    ignored = self._git_start(["-o", "-i", "--directory", "--exclude-standard"])
                    folders = self._folders(self._git_finish(untracked, folders=True))
                    if folders is not None:  # untracked folders holding no listed file: watched too
                        self._table.set_extra_folders(folders)
                    self._ignored = self._folders(self._git_finish(ignored, folders=True)) or []
                names = self._listing = self._git_finish(files)
                self._git = names is not None
        changes = self._table.scan(names, self.max_files, full)
        if changes is None:
            self._pause(f"the project has more than {self.max_files:,} files (checkpoints.trackShellMaxFiles)")
            return None
        # an edit tool's temp file, caught mid-write by a pass while a sub-agent writes: never a file to restore
        return [change for change in changes if not is_replace_temporary(change[0])]

    @staticmethod
    def _folders(listed: list[str] | None) -> list[str] | None:
        """The folders of a `--directory` listing: the untracked folders git does not ignore
        that hold no listed file (the native watches cover them too, so a file created there
        changes the listing), or those git ignores whole (`node_modules/`, `target/`: the item
        walks around a `bash` call skip them, as git's listing skips their files)."""
        return None if listed is None else [name.rstrip(os.sep) for name in listed if name.endswith(os.sep)]

    def _git_start(self, arguments: list[str]) -> subprocess.Popen[bytes] | None:
        try:
            return subprocess.Popen(["git", "-C", self.cwd, "ls-files", "-z", *arguments],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        except OSError:
            return None

    def _git_finish(self, process: subprocess.Popen[bytes] | None, *, folders: bool = False) -> list[str] | None:
        if process is None:
            return None
        try:
            output, _ = process.communicate(timeout=60)
        except subprocess.SubprocessError:
            process.kill()
            process.wait()
            return None
        if process.returncode != 0:
            return None
        base = self.cwd + os.sep
        return [base + os.fsdecode(name) for name in dict.fromkeys(output.split(b"\0"))
                if name and (folders or not name.endswith(b"/"))]

    # ---- the baseline

    def start(self) -> None:
        """Takes the baseline (or, later, brings the cache current) in the background."""
        if self._closed or self.paused is not None or self.running:
            return
        self._task = self.worker.submit(self._refresh_quietly)

    def wait(self) -> None:
        """Waits for the background baseline or refresh to finish."""
        task, self._task = self._task, None
        if task is not None:
            task.wait()

    def stop(self, *, save: bool = True) -> None:
        """Stops a background pass at the next file, waits for it, and keeps what the cache knows
        in the sidecar (the next process of the session starts from it; unless not `save`).
        Tracking ends here."""
        self._stop = self._closed = True
        self.wait()
        self.worker.close()
        if save:
            self._save_quietly()
        self.roots.close()

    @property
    def running(self) -> bool:
        """Whether a background pass is running."""
        return self._task is not None and not self._task.is_set()

    def _refresh_quietly(self) -> None:
        try:
            self.refresh()
        except Exception as error:  # tracking is a safety net: never a failed turn
            self._pause(f"tracking failed: {error}")
        self._save_quietly()

    def _load(self) -> None:
        """Starts from the sidecar a previous process of the session left (once)."""
        self._loaded = True
        if self.sidecar is None:
            return
        rows = shell_baseline.load(self.sidecar, self.cwd, self.store)
        for name, key, content_id, stored in rows:
            self.cache[name] = Entry(key, content_id, key[3], stored=stored)
            if not stored:
                self._unstored.add(name)
        self._table.set_many([(name, key) for name, key, _, _ in rows])

    def _save_quietly(self) -> None:
        if not self._dirty or self.sidecar is None:
            return
        self._dirty = False
        rows = [(name, entry.key, entry.content_id, entry.stored) for name, entry in list(self.cache.items())]
        try:
            shell_baseline.save(self.sidecar, self.cwd, rows)
        except OSError:
            self._dirty = True  # a cache: the next pass tries again

    def refresh(self, *, full: bool = True) -> list[str]:
        """Brings the cache current: stores the files whose stat key changed (and what a command
        left, not stored yet), forgets the gone ones. Returns the paths whose content changed
        since the cache last saw them. `full`: stat every file, whatever the watches say."""
        if not self._loaded:
            self._load()
        scanned = self._scan(full=full)
        if scanned is None:
            return []
        pending = {name: key for name, key in scanned}
        for name in self._unstored:
            if name not in pending and name in self.cache:
                pending[name] = self.cache[name].key
        changed = []
        stores: list[tuple[str, StatKey]] = []
        for name, key in pending.items():
            if key is not None:
                stores.append((name, key))
            elif name in self.cache:
                del self.cache[name]
                self._table.forget(name)
                self._unstored.discard(name)
                self._dirty = True
                changed.append(name)
        for name, key, entry in self._store_all(stores):
            known = self.cache.get(name)
            if known is not None and known.content_id != entry.content_id:
                changed.append(name)
            self.cache[name] = entry
            self._table.set(name, key)
            self._unstored.discard(name)
            self._dirty = True
        return changed

    def _store_all(self, items: list[tuple[str, StatKey]]) -> Iterator[tuple[str, StatKey, Entry]]:
        """Stores the files, in order; many at once on a few threads (the store's reads,
        compression and fsyncs run outside the GIL), so a first baseline is no slower than
        backing every file up one by one. Stops at the next file once tracking stops."""

        def one(item: tuple[str, StatKey]) -> tuple[str, StatKey, Entry | None]:
            if self._stop or self.paused is not None:
                return item[0], item[1], None
            return item[0], item[1], self._store(*item)

        if len(items) < PARALLEL_FROM:
            results: Iterable[tuple[str, StatKey, Entry | None]] = map(one, items)
            yield from ((name, key, entry) for name, key, entry in results if entry is not None)
            return
        with ThreadPoolExecutor(max_workers=STORE_THREADS, thread_name_prefix="commandcode-shell-store") as pool:
            for name, key, entry in pool.map(one, items):
                if entry is not None:
                    yield name, key, entry

    def _store(self, name: str, key: StatKey) -> Entry | None:
        if self.max_store_bytes is not None:
            with self._bytes_lock:
                if self._stored_bytes is None:
                    self._stored_bytes = self.store.usage()[1]
                if self._stored_bytes + key[0] > self.max_store_bytes:
                    self._pause(f"the backup store reached checkpoints.maxStoreBytes ({self.max_store_bytes:,} bytes)")
                    return None
        try:
            snapshot = self.store.backup_file(Path(name))
        except OSError:
            return None  # vanished or unreadable meanwhile: the next pass sees it again
        if snapshot.kind != "regular" or snapshot.content_id is None:
            return None
        try:
            self.roots.add([snapshot.content_id])  # a GC root while this process runs
        except OSError as error:
            self._pause(f"the store's roots file cannot be written ({error.strerror or error})")
            return None
        if snapshot.stored_now and self._stored_bytes is not None:
            with self._bytes_lock:
                self._stored_bytes += snapshot.size or 0
        # The key from before the read: a write meanwhile changes it, so the next pass reads again.
        return Entry(key, snapshot.content_id, snapshot.mode if snapshot.mode is not None else key[3])

    def _inspect_all(self, scanned: list[tuple[str, StatKey | None]]) -> list[Entry | None]:
        """The entry of what a command left at each path a pass found with a stat key, hashed but
        not stored yet (see `Entry`); None for the others. One native call: the files are read
        and hashed in parallel, without the GIL."""
        wanted = [name for name, key in scanned if key is not None]
        states = iter(self.store.inspect_files(wanted) if wanted else [])
        entries: list[Entry | None] = []
        for _, key in scanned:
            state = None if key is None else next(states)
            entries.append(None if key is None or state is None else Entry(key, state[0], state[1], stored=False))
        return entries

    def _pause(self, why: str) -> None:
        if self.paused is None:
            self.paused = why

    def take_notices(self) -> list[str]:
        """The one notice of a pause, the first time it is asked for, and the device nodes the
        last command made or removed."""
        notices, self._notices = self._notices, []
        if self.paused is None or self._reported:
            return notices
        self._reported = True
        return [*notices, f"shell commands are no longer tracked for rewinds in this session: {self.paused}"]

    # ---- around a bash call

    def before_shell(self) -> None:
        """Finishes the baseline, then brings the cache current (edit tools wrote since), and
        pins the project's folders as the ones before the commands (until `end_commands`)."""
        self.wait()
        if self.paused is None and not self._closed:
            self.refresh(full=False)
            self._items, self._devices = shell_items.scan(self.cwd, [self._excluded, *self._ignored])
            hollow = [path for path, state in self._items.items() if state[0] == "folder"]
            self._pinned = self._table.pin_folders(hollow)

    def end_commands(self) -> None:
        """The last of the overlapping commands ended: the next folders are found afresh."""
        self._table.unpin_folders()
        self._pinned = []

    def pending_state(self) -> dict[str, Any] | None:
        """What a note of the commands about to run needs besides the baseline's sidecar
        (`shell_pending.py`), once that sidecar is on disk and current; None when it is not
        (tracking paused, no sidecar, its write failed). Call after `before_shell`."""
        if self.sidecar is None or self.paused is not None or self._items is None:
            return None
        self._save_quietly()
        if self._dirty:
            return None
        return {"items": [[path, *state] for path, state in self._items.items()], "devices": sorted(self._devices),
                "ignored": self._ignored, "folders": self._pinned}

    def recover(self, items: dict[str, shell_items.TreeState], devices: frozenset[str], ignored: list[str],
                folders: list[str]) -> list[ShellChange]:
        """What commands a killed process ran changed since the baseline noted before them
        (`shell_pending.py`): the sidecar is the cache, `items`, `devices`, `ignored` and
        `folders` the rest of the state `before_shell` had."""
        self._load()
        self._items, self._devices, self._ignored = items, devices, ignored
        self._table.pin_folders(folders)
        return self.after_shell()

    def after_shell(self) -> list[ShellChange]:
        """The files the command created, changed or deleted (the cache then holds their new state)."""
        if self.paused is not None or self._closed:
            return []
        scanned = self._scan(full=False) or []
        items = self._item_changes()
        if not scanned and not items:
            return []
        created = [name for name, key in scanned if key is not None and name not in self.cache]
        made = dict(zip(created, self._table.made_folders(created), strict=True)) if created else {}
        changes = []
        seen: list[tuple[str, StatKey]] = []
        for (name, key), entry in zip(scanned, self._inspect_all(scanned), strict=True):
            known = self.cache.get(name)
            if key is None:
                # gone, or now a symlink, FIFO or folder (one grown over the cap is left alone)
                if known is not None and (not os.path.lexists(name) or name in items):
                    del self.cache[name]
                    self._table.forget(name)
                    self._unstored.discard(name)
                    changes.append(ShellChange(name, known, None))
                continue
            if entry is None:
                continue
            self.cache[name] = entry
            seen.append((name, key))
            self._unstored.add(name)
            if known is None or known.content_id != entry.content_id or known.mode != entry.mode:
                changes.append(ShellChange(name, known, entry, made.get(name, [])))
        self._table.set_many(seen)
        by_path = {change.path: change for change in changes}
        for name, (before, after) in items.items():
            change = by_path.get(name)
            if change is None:
                known = self.cache.get(name)  # a file that stayed as it was: no item changed it
                change = by_path[name] = ShellChange(name, known, known)
                changes.append(change)
            change.before_item, change.after_item = before, after
        if changes:
            self._dirty = True  # the caller starts the pass that stores what the command left (`start`)
        return changes

    def _item_changes(self) -> dict[str, tuple[shell_items.TreeState | None, shell_items.TreeState | None]]:
        """The symlinks, FIFOs, sockets and empty folders the command changed (git's ignored ones
        left out); a device node it made or removed gets a notice instead."""
        before, devices = self._items, self._devices
        self._items, self._devices = shell_items.scan(self.cwd, [self._excluded, *self._ignored])
        if before is None:
            return {}
        for path in sorted(devices ^ self._devices):
            done = "made" if path in self._devices else "removed"
            self._notices.append(f"the command {done} the device node {path}: a rewind cannot undo that "
                                 "(making one needs root), so it is not tracked")
        found = {path: (old, new) for path, old, new in shell_items.changed(before, self._items)
                 if not shell_items.filled(old, new, path)}
        if self._git and found:
            shown = shell_items.visible(self.cwd, list(found))
            found = {path: states for path, states in found.items() if path in shown}
        return found


def tracker_for(cwd: Path, store: backups.BackupStore, notify: Callable[[str], None], *,
                project: ProjectContext, sidecar: Path | None = None) -> ShellTracker | None:
    """The tracker the settings of the caller's context ask for (`checkpoints.trackShell`, its
    limits), or None; `sidecar` keeps its baseline across processes (`shell_baseline.py`)."""
    from ..errors import SettingsError

    try:
        settings = project.settings()
        if not settings.checkpoints_track_shell:
            return None
        return ShellTracker(cwd, store, max_files=settings.checkpoints_track_shell_max_files,
                            max_store_bytes=settings.checkpoints_max_store_bytes, sidecar=sidecar)
    except SettingsError as error:
        notify(f"{error}; shell commands are tracked with the default limits")
        return ShellTracker(cwd, store, sidecar=sidecar)
