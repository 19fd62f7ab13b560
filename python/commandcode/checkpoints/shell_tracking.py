"""Shell commands are undone too: a baseline of the project in the store, kept current by stat.

Owns `ShellTracker` (setting `checkpoints.trackShell`, default on). The project's files are the
ones git does not ignore (`git ls-files -co --exclude-standard`; every file outside a
repository), regular files under the 10 MB cap, at most `checkpoints.trackShellMaxFiles`.

- **Baseline**: each file's bytes go into the content store (stored once, shared with every
  backup) and its stat key (size, mtime_ns, inode) into a cache. It is taken in a background
  thread started when a turn opens, so it runs while the first model call does; later turns
  only re-read the files whose stat key changed (other programs' edits between turns).
- **Before a `bash` call** the baseline is finished first (correctness before speed, also in
  `-p`) and the cache brought current; **after it**, a second stat pass (with a fresh listing,
  for created files) finds what the command created, changed or deleted. Their previous bytes
  are already stored, so the manager records them like edit-tool backups (`source: "shell"`).
- **GC roots**: every object the cache counts on is a live root of the store's garbage
  collection while this process runs (`gc_roots.py`), however old it is: a record names it only
  once a command changes its file.
- **Limits**: more files than the maximum, or a store past `checkpoints.maxStoreBytes`, pause
  tracking for the session with one notice; a turn never fails because of tracking.
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from ..config.paths import data_dir
from . import store as backups
from .gc_roots import LiveRoots

StatKey = tuple[int, int, int, int]
"""(size, mtime_ns, inode, mode) of a regular file (a `chmod` changes only the mode)."""

DEFAULT_MAX_FILES = 50_000


class Entry:
    """What the cache knows of one file: its stat key, content id and mode, and whether its
    bytes are in the store yet (what a command left is stored in the background, while the
    next model call runs; `before_shell` finishes it before the next command)."""

    __slots__ = ("content_id", "key", "mode", "stored")

    def __init__(self, key: StatKey, content_id: str, mode: int, *, stored: bool = True) -> None:
        self.key, self.content_id, self.mode, self.stored = key, content_id, mode, stored


class ShellChange:
    """One file a shell command changed: before (`None`: it did not exist) and after (`None`: deleted)."""

    __slots__ = ("after", "before", "mode", "path")

    def __init__(self, path: str, before: Entry | None, after: Entry | None) -> None:
        self.path, self.before, self.after = path, before, after
        self.mode = before.mode if before is not None else None


def _stat_key(path: str) -> tuple[StatKey, int] | None:
    """The stat key and mode of a regular file under the cap (None: gone, a symlink, too large...)."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode) or status.st_size > backups.MAX_BACKUP_SIZE:
        return None
    mode = stat.S_IMODE(status.st_mode)
    return (status.st_size, status.st_mtime_ns, status.st_ino, mode), mode


class ShellTracker:
    """The baseline and stat cache of one session's project (see the module docs)."""

    def __init__(self, cwd: Path, store: backups.BackupStore, *, max_files: int = DEFAULT_MAX_FILES,
                 max_store_bytes: int | None = None) -> None:
        self.cwd = os.path.abspath(cwd)
        self.store = store
        self.max_files = max_files
        self.max_store_bytes = max_store_bytes
        self.cache: dict[str, Entry] = {}
        self.paused: str | None = None  # why tracking stopped (reported once)
        self._reported = False
        self._thread: threading.Thread | None = None
        self._stop = False
        self._stored_bytes: int | None = None
        self._git: bool | None = None
        self._excluded = os.path.abspath(data_dir())
        self._tree: dict[str, tuple[int, list[str], list[str]]] = {}  # folder → (mtime_ns, files, folders)
        self.roots = LiveRoots(store.root)  # the baseline's objects stay collectable only once no record needs them

    # ---- listing

    def list_files(self) -> list[str] | None:
        """The project's files (absolute), or None when there are too many (tracking pauses).
        Outside a repository, a file is created, deleted or renamed only by changing its
        folder's mtime, so only the folders whose mtime changed are listed again."""
        names = self._git_files() if self._git is not False else None
        if names is None:
            names = self._walk()
        if len(names) > self.max_files:
            self._pause(f"the project has more than {self.max_files:,} files (checkpoints.trackShellMaxFiles)")
            return None
        return [name for name in names if not (name == self._excluded or name.startswith(self._excluded + os.sep))]

    def _git_files(self) -> list[str] | None:
        try:
            completed = subprocess.run(["git", "-C", self.cwd, "ls-files", "-z", "-co", "--exclude-standard"],
                                       capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            completed = None
        if completed is None or completed.returncode != 0:
            self._git = False
            return None
        self._git = True
        base = self.cwd + os.sep
        return [base + os.fsdecode(name) for name in dict.fromkeys(completed.stdout.split(b"\0")) if name]

    def _walk(self) -> list[str]:
        """Every file below the folder (no symlinked folders, no `.git`), by `scandir`; folders
        whose mtime did not change since the last walk are not read again."""
        seen: dict[str, tuple[int, list[str], list[str]]] = {}
        pending = [self.cwd]
        count = 0
        while pending and count <= self.max_files:
            folder = pending.pop()
            listed = self._list_folder(folder)
            if listed is None:
                continue
            seen[folder] = listed
            count += len(listed[1])
            pending.extend(listed[2])
        self._tree = seen
        return [name for _, files, _ in seen.values() for name in files]

    def _list_folder(self, folder: str) -> tuple[int, list[str], list[str]] | None:
        try:
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            return None
        known = self._tree.get(folder)
        if known is not None and known[0] == mtime:
            return known
        files, folders = [], []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != ".git":
                            folders.append(entry.path)
                    else:
                        files.append(entry.path)
        except OSError:
            return None
        return mtime, files, folders

    # ---- the baseline

    def start(self) -> None:
        """Takes the baseline (or, later, brings the cache current) in the background."""
        if self.paused is not None or (self._thread is not None and self._thread.is_alive()):
            return
        self._thread = threading.Thread(target=self._refresh_quietly, name="commandcode-shell-baseline", daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Waits for the background baseline or refresh to finish."""
        thread = self._thread
        if thread is not None:
            thread.join()
            self._thread = None

    def stop(self) -> None:
        """Stops a background pass at the next file (process exit); the roots file goes."""
        self._stop = True
        self.wait()
        self.roots.close()

    def _refresh_quietly(self) -> None:
        try:
            self.refresh()
        except Exception as error:  # tracking is a safety net: never a failed turn
            self._pause(f"tracking failed: {error}")

    def refresh(self) -> list[str]:
        """Brings the cache current: stores the files whose stat key changed, forgets the gone
        ones. Returns the paths that changed since the cache last saw them."""
        names = self.list_files()
        if names is None:
            return []
        changed = []
        present = set()
        for name in names:
            if self._stop or self.paused is not None:
                break
            present.add(name)
            facts = _stat_key(name)
            if facts is None:
                continue
            known = self.cache.get(name)
            if known is not None and known.key == facts[0] and known.stored:
                continue
            entry = self._store(name, facts)
            if entry is not None:
                if known is not None and known.content_id != entry.content_id:
                    changed.append(name)
                self.cache[name] = entry
        if not self._stop and self.paused is None:
            for name in [name for name in self.cache if name not in present]:
                del self.cache[name]
                changed.append(name)
        return changed

    def _store(self, name: str, facts: tuple[StatKey, int]) -> Entry | None:
        if self.max_store_bytes is not None:
            if self._stored_bytes is None:
                self._stored_bytes = self.store.usage()[1]
            if self._stored_bytes + facts[0][0] > self.max_store_bytes:
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
            self._stored_bytes += snapshot.size or 0
        after = _stat_key(name)  # the key of the bytes just read (a write meanwhile shows next time)
        return Entry(after[0] if after is not None else facts[0], snapshot.content_id, snapshot.mode or facts[1])

    def _inspect(self, name: str, facts: tuple[StatKey, int]) -> Entry | None:
        """The entry of what a command left, hashed but not stored yet (see `Entry`)."""
        try:
            state = self.store.inspect_file(Path(name))
        except OSError:
            return None
        if state.kind != "regular" or state.content_id is None:
            return None
        return Entry(facts[0], state.content_id, state.mode or facts[1], stored=False)

    def _pause(self, why: str) -> None:
        if self.paused is None:
            self.paused = why

    def take_notices(self) -> list[str]:
        """The one notice of a pause, the first time it is asked for."""
        if self.paused is None or self._reported:
            return []
        self._reported = True
        return [f"shell commands are no longer tracked for rewinds in this session: {self.paused}"]

    # ---- around a bash call

    def before_shell(self) -> None:
        """Finishes the baseline, then brings the cache current (edit tools wrote since)."""
        self.wait()
        if self.paused is None:
            self.refresh()

    def after_shell(self) -> list[ShellChange]:
        """The files the command created, changed or deleted (the cache then holds their new state)."""
        if self.paused is not None:
            return []
        before = dict(self.cache)
        names = self.list_files()
        if names is None:
            return []
        changes = []
        seen = set()
        unreadable = set()
        for name in names:
            seen.add(name)
            facts = _stat_key(name)
            known = before.get(name)
            if facts is None:
                unreadable.add(name)
                continue
            if known is not None and known.key == facts[0]:
                continue
            entry = self._inspect(name, facts)
            if entry is None:
                continue
            self.cache[name] = entry
            if known is None or known.content_id != entry.content_id or known.mode != entry.mode:
                changes.append(ShellChange(name, known, entry))
        for name, known in before.items():
            if (name not in seen or name in unreadable) and not os.path.lexists(name):  # git lists a deleted tracked file
                self.cache.pop(name, None)
                changes.append(ShellChange(name, known, None))
        if changes:
            self.start()  # stores what the command left while the next model call runs
        return changes


def tracker_for(cwd: Path, store: backups.BackupStore, notify: Callable[[str], None]) -> ShellTracker | None:
    """The tracker the settings ask for (`checkpoints.trackShell`, its limits), or None."""
    from ..config.settings import load_settings
    from ..errors import SettingsError

    try:
        settings = load_settings(cwd)
        if not settings.checkpoints_track_shell:
            return None
        return ShellTracker(cwd, store, max_files=settings.checkpoints_track_shell_max_files,
                            max_store_bytes=settings.checkpoints_max_store_bytes)
    except SettingsError as error:
        notify(f"{error}; shell commands are tracked with the default limits")
        return ShellTracker(cwd, store)
