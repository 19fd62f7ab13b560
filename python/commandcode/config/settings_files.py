"""Where the settings files are and how one is read: the three layers' paths (the user's, and the
project's two at the root of the git repository holding the working directory), paths as
messages show them, and one file read into a `SettingsLayer` (see `config/settings.py` for the
rules of reading and merging)."""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import SettingsError
from ..storage.regular import NotRegularFileError, read_regular
from ..values import Frozen
from .paths import data_root
from .settings_json import parse_settings

LAYERS = ("user", "project", "local")
SETTINGS_FOLDER = ".commandcode"
_PROJECT_FILES = {"project": "settings.json", "local": "settings.local.json"}


# --------------------------------------------------------------------------------------------
# Where the files are


def repository_root(cwd: str | os.PathLike[str]) -> str:
    """The root of the git repository holding `cwd` (nearest `.git` upwards), else `cwd`: the
    project whose `.commandcode/settings*.json` apply. (Not `config.paths.sessions_folder`, the
    session folder of a working directory.)"""
    start = os.path.abspath(os.fspath(cwd))
    folder = start
    while not os.path.lexists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return start
        folder = parent
    return folder


def settings_path(layer: str, cwd: str | os.PathLike[str] | None = None) -> Path:
    """The file of `layer` ("user", "project" or "local") for the working directory `cwd`."""
    if layer == "user":
        return Path(data_root(), "settings.json")
    if layer not in _PROJECT_FILES:
        raise SettingsError(f"unknown settings layer {layer!r}", hint=f"use one of: {', '.join(LAYERS)}")
    root = repository_root(current_dir() if cwd is None else cwd)
    return Path(session_worktree_main(root) or root, SETTINGS_FOLDER, _PROJECT_FILES[layer])


def main_checkout(root: str) -> str:
    """The main checkout of the repository `root` (a `repository_root`) is a checkout of: `root`
    itself, or for a linked worktree (its `.git` a file `gitdir: <common dir>/worktrees/<name>`)
    the folder holding the common `.git` folder. The one rule for it (`workspace.worktrees` asks
    it too, git only checking the repository is there); read from the files alone (no git
    process): settings are read before every turn. A submodule or a separate git dir is its own
    main checkout, as `git rev-parse --git-common-dir` has it."""
    marker = os.path.join(root, ".git")
    try:
        if os.path.islink(marker) or not os.path.isfile(marker):
            return root
        with open(marker, encoding="utf-8", errors="replace") as handle:
            text = handle.read(4096)
    except OSError:
        return root
    if not text.startswith("gitdir:"):
        return root
    gitdir = os.path.join(root, text[len("gitdir:"):].strip())  # an absolute gitdir stays as it is
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8", errors="replace") as handle:
            common = os.path.join(gitdir, handle.read(4096).strip())
    except OSError:  # git writes `commondir` into every linked worktree's folder; else its layout says
        if os.path.basename(os.path.dirname(gitdir)) != "worktrees":
            return root
        common = os.path.dirname(os.path.dirname(gitdir))
    common = os.path.realpath(common)
    return os.path.dirname(common) if os.path.basename(common) == ".git" else root


def session_worktree_main(root: str) -> str | None:
    """The main checkout (`main_checkout`) when `root` is one of our session worktrees
    (`<main>/.commandcode/worktrees/<name>`), else None. A session there reads and saves the main
    checkout's project settings, so a saved permission answer applies to the repository and
    outlives the worktree (docs/format.md §17)."""
    parent = os.path.dirname(root)
    if os.path.basename(parent) != "worktrees" or os.path.basename(os.path.dirname(parent)) != SETTINGS_FOLDER:
        return None
    main = main_checkout(root)
    if main == root or os.path.realpath(parent) != os.path.realpath(os.path.join(main, SETTINGS_FOLDER, "worktrees")):
        return None
    return os.path.dirname(os.path.dirname(parent))  # as the caller spelled it (the files' rule resolved it)


def current_dir() -> str:
    try:
        return os.getcwd()
    except OSError as error:  # the folder was deleted (or moved out of reach) under the process
        raise SettingsError(f"cannot find the project's settings: the working directory is gone ({error.strerror})",
                            hint="cd into the project again") from None


def shown_path(path: str | os.PathLike[str]) -> str:
    """`path` as messages show it: the home folder written as `~`."""
    text, home = os.fspath(path), os.environ.get("HOME", "").rstrip(os.sep)
    return "~" + text[len(home):] if home and text.startswith(home + os.sep) else text


# --------------------------------------------------------------------------------------------
# Reading one file


class SettingsLayer(Frozen):
    """One layer as read: its name, its file, and the file's object (`{}` when it is missing)."""

    __slots__ = ("data", "exists", "layer", "path", "repeated_keys")
    data: dict[str, Any]
    exists: bool
    layer: str
    path: Path
    repeated_keys: tuple[str, ...]

    def __init__(self, layer: str, path: Path, data: dict[str, Any], exists: bool,
                 repeated_keys: Sequence[str] = ()) -> None:
        self._set(data=data, exists=exists, layer=layer, path=path, repeated_keys=tuple(repeated_keys))


def read_bytes(path: str, shown: str) -> bytes | None:
    try:
        return read_regular(path, follow=True)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:  # a project deeper than PATH_MAX: no file can be opened there
            return None
        if isinstance(error, (IsADirectoryError, NotRegularFileError)):
            raise SettingsError(f"{shown} is not a regular file; refusing to open it",
                                hint="put a JSON file there, or remove what is in its place") from None
        raise SettingsError(f"cannot read {shown}: {error.strerror or error}") from None


def read_layer(layer: str, path: Path) -> SettingsLayer:
    """One layer's file, read and parsed (`{}` when it is missing).

    Raises:
        SettingsError: the file is malformed, unreadable, or not a regular file.
    """
    raw = read_bytes(os.fspath(path), shown_path(path))
    if raw is None:
        return SettingsLayer(layer, path, {}, False)
    data, _bom, repeated = parse_settings(raw, shown_path(path))
    return SettingsLayer(layer, path, data, True, repeated)


LOCAL_EXCLUDE_LINE = "/.commandcode/settings.local.json"


def git_exclude_file(root: str | os.PathLike[str]) -> Path | None:
    """`.git/info/exclude` of the repository at `root` (through a worktree's `gitdir:` file and
    its `commondir`), or None where `root` is no repository. No git process: settings stay cheap."""
    dot_git = Path(root, ".git")
    if dot_git.is_file():
        try:
            line = dot_git.read_text(encoding="utf-8", errors="surrogateescape").strip()
        except OSError:
            return None
        if not line.startswith("gitdir:"):
            return None
        dot_git = Path(root, line[len("gitdir:"):].strip())
        try:
            common = (dot_git / "commondir").read_text(encoding="utf-8", errors="surrogateescape").strip()
            dot_git = dot_git / common
        except OSError:
            pass
    return dot_git / "info" / "exclude" if dot_git.is_dir() else None


def exclude_local_settings(settings_file: str | os.PathLike[str]) -> None:
    """Keeps a new `.commandcode/settings.local.json` (personal: "don't ask again" rules) out of
    `git status`, as Claude Code does for its own: one line in the repository's info/exclude.
    Best effort: a repository we cannot write to is left as it is."""
    exclude = git_exclude_file(Path(settings_file).parent.parent)
    if exclude is None:
        return
    try:
        add_exclude_line(exclude, LOCAL_EXCLUDE_LINE)
    except OSError:
        pass


def add_exclude_line(exclude: Path, line: str) -> None:
    """Appends `line` to a git `info/exclude` file unless it is there already (the file made when
    missing, its other lines kept).

    Raises:
        OSError: it cannot be read or written.
    """
    from ..storage.durable import atomic_write

    text = exclude.read_text(encoding="utf-8", errors="surrogateescape") if exclude.is_file() else ""
    if line in text.splitlines():
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    prefix = text if not text or text.endswith("\n") else text + "\n"
    atomic_write(exclude, f"{prefix}{line}\n".encode("utf-8", "surrogateescape"))
