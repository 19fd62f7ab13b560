"""Settings layers: the `settings.json` files of the user and the project, read, merged and changed.

Three layers, later ones winning (Claude Code's scopes, without its managed and command-line ones):

- `user`: `$COMMANDCODE_HOME/settings.json`, else `~/.commandcode/settings.json`;
- `project`: `<project>/.commandcode/settings.json`, shared with the team (usually committed);
- `local`: `<project>/.commandcode/settings.local.json`, personal (usually git-ignored);

where `<project>` is the root of the git repository that holds the working directory (the nearest
folder upwards with a `.git` entry), else the working directory itself. A project file that is the
user file (the project is the home folder) is read once, as the user layer.

Merging follows Claude Code: objects merge key by key at every depth, a later scalar replaces an
earlier one, and lists are concatenated across layers (user first) with repeats dropped, so the
permission rules of every layer apply together.

Reading: a missing, empty or blank file is an empty layer, and a UTF-8 byte-order mark is skipped
(and kept on write). A key repeated in one object counts with its last value, as in `JSON.parse`
(with a warning; writes refuse such a file, which a rewrite would shorten). Anything else that
is not one JSON object (a syntax error, `NaN`, a number out of range, bytes that are not UTF-8, a
top level that is no object) raises `SettingsError` naming the file, line and column. A folder,
FIFO or device in place of a file, also behind a symlink, is refused without being opened. The
typed accessors of `Settings` check their value's type; a wrong one adds a warning naming the
file and key to `Settings.warnings` and the default is used.

Writing (`update_setting`, `add_to_list`) re-reads the one file under an advisory lock on its
folder, changes one key and replaces the file atomically (`fsutil.atomic_write`): every other key,
unknown ones included, keeps its value and place, new keys go last, the text is 2-space indented
with a trailing newline, and the file keeps its mode. A malformed file is never overwritten. A
symlinked settings file (a dotfile manager's) is written through the link.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import SettingsError
from ..storage.durable import atomic_write, ensure_dir
from .settings_files import (
    LAYERS,
    SettingsLayer,
    exclude_local_settings,
    read_bytes,
    read_layer,
    repository_root,
    settings_path,
    shown_path,
)
from .settings_json import kind, parse_settings, settings_bytes

_NEW_FILE_MODES = {"user": 0o600, "project": 0o644, "local": 0o600}  # the project file is shared
_MISSING: Any = object()

KeyPath = str | Sequence[str]


# --------------------------------------------------------------------------------------------
# Merging


def _identity(value: Any) -> str:
    """What makes two list items repeats: same JSON type and text (`true` is not `1`)."""
    return type(value).__name__ + json.dumps(value, sort_keys=True, ensure_ascii=False)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    return [_copy(item) for item in value] if isinstance(value, list) else value


def merge_layers(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` merged into a copy of `base`: objects key by key, lists concatenated without repeats,
    anything else replaced."""
    result: dict[str, Any] = _copy(base)
    for key, value in over.items():
        current = result.get(key, _MISSING)
        if isinstance(current, dict) and isinstance(value, dict):
            result[key] = merge_layers(current, value)
        elif isinstance(current, list) and isinstance(value, list):
            seen = {_identity(item) for item in current}
            for item in value:
                if _identity(item) not in seen:
                    seen.add(_identity(item))
                    current.append(_copy(item))
        else:
            result[key] = _copy(value)
    return result


def _parts(key_path: KeyPath) -> list[str]:
    parts = key_path.split(".") if isinstance(key_path, str) else list(key_path)
    if not parts or any(not isinstance(part, str) or not part for part in parts):
        raise SettingsError(f"bad settings key {key_path!r}",
                            hint="write keys as names joined by dots, such as permissions.allow")
    return parts


def _lookup(data: dict[str, Any], parts: list[str]) -> tuple[Any, str | None]:
    """The value at `parts` (`_MISSING` when absent), and the key path of an object on the way
    that is something else (then the value is `_MISSING`)."""
    current: Any = data
    for depth, part in enumerate(parts):
        if not isinstance(current, dict):
            return _MISSING, ".".join(parts[:depth])
        current = current.get(part, _MISSING)
        if current is _MISSING:
            return _MISSING, None
    return current, None


# --------------------------------------------------------------------------------------------
# The merged, typed view

PERMISSION_MODES_DEFAULT = "default"
EXPORT_FORMATS = ("html", "md", "jsonl")
WORKTREE_BASE_REFS = ("fresh", "head")


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_positive(value: Any) -> bool:
    return _is_count(value) and value > 0


class Settings:
    """The merged settings of one working directory, with typed accessors for the keys commandcode
    uses and `get("a.b")` for any other. `warnings` collects one line per wrong-typed value an
    accessor met (`<file>: <key>: expected ..., got ...; using the default (...)`), for a front
    end to show with `present.console.warn`."""

    __slots__ = ("data", "layers", "warnings")

    def __init__(self, layers: Sequence[SettingsLayer]) -> None:
        self.layers = tuple(layers)
        merged: dict[str, Any] = {}
        for layer in self.layers:
            merged = merge_layers(merged, layer.data)
        self.data = merged
        self.warnings: list[str] = [
            f"{shown_path(layer.path)}: the key {json.dumps(key)} appears more than once in an object; the last one counts"
            for layer in self.layers for key in layer.repeated_keys]

    def get(self, key_path: KeyPath, default: Any = None) -> Any:
        """The merged value at a dotted key path (a copy), or `default` when it is not set."""
        value = _lookup(self.data, _parts(key_path))[0]
        return default if value is _MISSING else _copy(value)

    def source(self, key_path: KeyPath) -> SettingsLayer | None:
        """The layer whose value `get(key_path)` shows (for a list: the last that adds to it)."""
        parts = _parts(key_path)
        for layer in reversed(self.layers):
            if _lookup(layer.data, parts)[0] is not _MISSING:
                return layer
        return None

    def _warn(self, layer: SettingsLayer | None, key: str, expected: str, value: Any, default: Any) -> None:
        where = shown_path(layer.path) if layer is not None else "settings"
        line = (f"{where}: {key}: expected {expected}, got {kind(value)}; "
                f"using the default ({json.dumps(default)})")
        if line not in self.warnings:
            self.warnings.append(line)

    def _checked(self, key: str, valid: Callable[[Any], bool], expected: str, default: Any) -> Any:
        parts = _parts(key)
        value, blocked = _lookup(self.data, parts)
        if blocked is not None:
            self._warn(self._blocking_layer(parts, blocked), blocked, "an object", self.get(blocked), default)
            return default
        if value is _MISSING:
            return default
        if valid(value):
            return _copy(value)
        self._warn(self.source(parts), key, expected, value, default)
        return default

    def _flag(self, key: str, default: bool) -> bool:
        """The boolean setting `key` (`_checked`: anything but true or false warns and gives `default`)."""
        return bool(self._checked(key, _is_bool, "true or false", default))

    def _blocking_layer(self, parts: list[str], blocked: str) -> SettingsLayer | None:
        for layer in reversed(self.layers):
            if _lookup(layer.data, parts)[1] == blocked:
                return layer
        return None

    def _rules(self, key: str) -> list[str]:
        """A list of strings gathered from every layer; a layer whose value is no list, and items
        that are no string, are reported and left out."""
        parts = _parts(key)
        rules: list[str] = []
        seen: set[str] = set()
        for layer in self.layers:
            value, blocked = _lookup(layer.data, parts)
            if blocked is not None:
                self._warn(layer, blocked, "an object", _lookup(layer.data, _parts(blocked))[0], [])
                continue
            if value is _MISSING:
                continue
            if not isinstance(value, list):
                self._warn(layer, key, "a list of strings", value, [])
                continue
            for position, item in enumerate(value):
                if not isinstance(item, str):
                    self._warn(layer, f"{key}[{position}]", "a string", item, [])
                elif item not in seen:
                    seen.add(item)
                    rules.append(item)
        return rules

    # Permissions (Claude Code's rules: deny wins over ask, ask over allow)
    def permission_rules(self, name: str) -> list[tuple[str, str]]:
        """`permissions.<name>` of every layer as (rule, file) pairs, strictly: a permission
        list is never dropped with a warning, which would run wider open than the file says.

        Raises:
            SettingsError: a layer's value is no list of strings (the message names the file).
        """
        key = f"permissions.{name}"
        rules: list[tuple[str, str]] = []
        for layer in self.layers:
            value, blocked = _lookup(layer.data, _parts(key))
            where = shown_path(layer.path)
            if blocked is not None:
                raise SettingsError(f"{where}: {blocked}: expected an object, got "
                                    f"{kind(_lookup(layer.data, _parts(blocked))[0])}; fix the file "
                                    "(its permission rules do not apply until then)")
            if value is _MISSING:
                continue
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise SettingsError(f"{where}: {key}: expected a list of strings, got {kind(value)}; "
                                    f"write it as [\"Bash(rm:*)\", ...] (its permission rules do not apply until then)")
            rules.extend((item, where) for item in value if (item, where) not in rules)
        return rules

    @property
    def permissions_allow(self) -> list[str]:
        return self._rules("permissions.allow")

    @property
    def permissions_deny(self) -> list[str]:
        return self._rules("permissions.deny")

    @property
    def permissions_ask(self) -> list[str]:
        return self._rules("permissions.ask")

    @property
    def permissions_default_mode(self) -> str:
        mode: str = self._checked("permissions.defaultMode", lambda value: isinstance(value, str) and bool(value),
                                  "a mode name", PERMISSION_MODES_DEFAULT)
        return mode

    @property
    def default_export_format(self) -> str:
        chosen: str = self._checked("defaultExportFormat", lambda value: value in EXPORT_FORMATS,
                                    " or ".join(f'"{name}"' for name in EXPORT_FORMATS), "html")
        return chosen

    @property
    def default_share_gist_format(self) -> str:
        """`/share gist`'s format (the real CLI's "Default share gist format")."""
        chosen: str = self._checked("defaultShareGistFormat", lambda value: value in EXPORT_FORMATS,
                                    " or ".join(f'"{name}"' for name in EXPORT_FORMATS), "html")
        return chosen

    @property
    def cleanup_period_days(self) -> int:
        days: int = self._checked("cleanupPeriodDays", _is_count, "a whole number of days (0 or more)", 30)
        return days

    @property
    def cleanup_mode(self) -> str:
        """What the automatic daily sweep does with old sessions: `"archive"` (the default) or `"delete"`."""
        mode: str = self._checked("cleanupMode", lambda value: value in ("archive", "delete"),
                                  '"archive" or "delete"', "archive")
        return mode

    @property
    def disable_scratchpad(self) -> bool:
        return self._flag("disableScratchpad", False)

    @property
    def branch_summary(self) -> bool:
        """Whether leaving a branch offers a summary by default."""
        return self._flag("branchSummary", True)

    @property
    def worktree_base_ref(self) -> str:
        """`"fresh"` (the default branch) or `"head"` (the current commit)."""
        ref: str = self._checked("worktree.baseRef", lambda value: value in WORKTREE_BASE_REFS,
                                 '"fresh" or "head"', "fresh")
        return ref

    @property
    def checkpoints_track_shell(self) -> bool:
        return self._flag("checkpoints.trackShell", True)

    @property
    def checkpoints_track_shell_max_files(self) -> int:
        count: int = self._checked("checkpoints.trackShellMaxFiles", _is_positive, "a whole number above 0", 50_000)
        return count

    @property
    def checkpoints_max_store_bytes(self) -> int | None:
        """The store's size limit in bytes; `None`: no limit."""
        limit: int | None = self._checked("checkpoints.maxStoreBytes", _is_positive, "a whole number above 0", None)
        return limit

    @property
    def checkpoints_compatible_backups(self) -> bool:
        """Whether backups are also written as the real CLI's raw `file-history` blobs (default on)."""
        return self._flag("checkpoints.compatibleBackups", True)

    @property
    def rewind_confirm_default(self) -> bool:
        """The default answer of a rewind's confirmation (`rewind.confirmDefault`)."""
        return self._flag("rewind.confirmDefault", True)

    @property
    def status_line(self) -> dict[str, Any] | None:
        """Claude Code's `{"type": "command", "command": "..."}`; `None`: the built-in line."""
        line: dict[str, Any] | None = self._checked(
            "statusLine", lambda value: isinstance(value, dict) and isinstance(value.get("command"), str),
            'an object with a "command" string', None)
        return line


def load_settings(cwd: str | os.PathLike[str] | None = None) -> Settings:
    """The merged settings for the working directory `cwd` (default: the current one).

    Raises:
        SettingsError: a layer's file is malformed, unreadable or not a regular file.
    """
    layers: list[SettingsLayer] = []
    seen: set[str] = set()
    for layer in LAYERS:
        path = settings_path(layer, cwd)
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        layers.append(read_layer(layer, path))
    return Settings(layers)


# --------------------------------------------------------------------------------------------
# Writing


@contextmanager
def _folder_locked(folder: str) -> Iterator[None]:
    """Holds an exclusive `flock` on `folder` so two writers' read-change-write do not interleave."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def _container(data: dict[str, Any], parts: list[str], shown: str) -> dict[str, Any]:
    """The object that holds the last key of `parts`, created on the way where missing."""
    current = data
    for depth, part in enumerate(parts[:-1]):
        child = current.setdefault(part, {})
        if not isinstance(child, dict):
            key = ".".join(parts[: depth + 1])
            raise SettingsError(f"{shown}: {key} is {kind(child)}, not an object; refusing to replace it",
                                hint="change it by hand")
        current = child
    return current


def _rewrite(layer: str, cwd: str | os.PathLike[str] | None, change: Callable[[dict[str, Any], str], bool]) -> bool:
    path = settings_path(layer, cwd)
    target = os.path.realpath(path) if os.path.islink(path) else os.fspath(path)
    shown, folder = shown_path(path), os.path.dirname(target)
    try:
        ensure_dir(folder)
        with _folder_locked(folder):
            raw = read_bytes(target, shown)
            data, bom, repeated = parse_settings(raw, shown) if raw is not None else ({}, False, [])
            if repeated:
                raise SettingsError(f"{shown}: the key {json.dumps(repeated[0])} appears more than once in an object; "
                                    "refusing to rewrite the file (the other values would be lost)", hint="change it by hand")
            if not change(data, shown):
                return False
            mode = stat.S_IMODE(os.stat(target).st_mode) if raw is not None else _NEW_FILE_MODES[layer]
            atomic_write(Path(target), settings_bytes(data, bom, shown), mode=mode)
        if raw is None and layer == "local":  # a new personal file stays out of git status
            exclude_local_settings(target)
    except OSError as error:
        raise SettingsError(f"cannot write {shown}: {error.strerror or error}; the file was left as it was") from None
    return True


def _require_json(layer: str, cwd: str | os.PathLike[str] | None, value: Any) -> None:
    """Refuses a value with no JSON text before any file is touched."""
    settings_bytes({"value": value}, False, shown_path(settings_path(layer, cwd)))


def update_setting(layer: str, key_path: KeyPath, value: Any, *, cwd: str | os.PathLike[str] | None = None) -> None:
    """Sets `key_path` to `value` in one layer's file, keeping everything else in it.

    Raises:
        SettingsError: the file is malformed or not a regular file, a key on the way is no
            object, or the write failed; in every case the file is as it was.
    """
    parts = _parts(key_path)
    _require_json(layer, cwd, value)

    def change(data: dict[str, Any], shown: str) -> bool:
        _container(data, parts, shown)[parts[-1]] = value
        return True

    _rewrite(layer, cwd, change)


def add_to_list(layer: str, key_path: KeyPath, value: Any, *, cwd: str | os.PathLike[str] | None = None) -> bool:
    """Appends `value` to the list at `key_path` in one layer's file (creating it); `False` when
    it is there already (nothing written).

    Raises:
        SettingsError: as `update_setting`, and when the key holds something other than a list.
    """
    parts = _parts(key_path)
    _require_json(layer, cwd, value)

    def change(data: dict[str, Any], shown: str) -> bool:
        holder = _container(data, parts, shown)
        current = holder.setdefault(parts[-1], [])
        if not isinstance(current, list):
            raise SettingsError(f"{shown}: {'.'.join(parts)} is {kind(current)}, not a list; refusing to replace it",
                                hint="change it by hand")
        if any(_identity(item) == _identity(value) for item in current):
            return False
        current.append(value)
        return True

    return _rewrite(layer, cwd, change)


__all__ = ["LAYERS", "Settings", "SettingsLayer", "add_to_list", "load_settings", "merge_layers", "parse_settings",
           "read_layer", "repository_root", "settings_path", "shown_path", "update_setting"]
