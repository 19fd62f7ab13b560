"""Git worktrees for sessions: `commandcode --worktree [NAME]` and `commandcode worktrees list|remove`.

A session's worktree is `<repository root>/.commandcode/worktrees/NAME`, on a new branch
`worktree-NAME` made from the repository's default branch (or from HEAD with `worktree.baseRef:
"head"`). The git-ignored files named by `.worktreeinclude` (gitignore syntax, matched by git
itself) are copied in, and `.commandcode/worktrees/` goes into `.git/info/exclude` so the main
checkout does not show the worktrees as untracked. What we know about a worktree (whether its name
was generated, the commit it started from) is `commandcode.json` in git's own folder for it
(`.git/worktrees/<name>/`), which git ignores and removes with the worktree.

On exit (`finish_worktree`): a clean worktree whose name was generated is removed with its
branch; one with changes, untracked files or commits is kept or removed as the user answers; a
headless (`-p`) run removes nothing. Git runs as a subprocess (`git -C`, porcelain output).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..config.context import ProjectContext, for_settings_of
from ..config.settings import repository_root
from ..config.settings_files import main_checkout, session_worktree_main
from ..errors import CommandcodeError, UsageError
from ..storage.durable import atomic_write

WORKTREES_FOLDER = os.path.join(".commandcode", "worktrees")
EXCLUDE_LINE = "/.commandcode/worktrees/"
BRANCH_PREFIX = "worktree-"
INCLUDE_FILE = ".worktreeinclude"
META_NAME = "commandcode.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_ADJECTIVES = ("amber", "brisk", "calm", "deft", "eager", "fair", "glad", "keen", "lucid", "merry", "nimble", "quiet")
_NOUNS = ("otter", "heron", "maple", "comet", "harbor", "lantern", "meadow", "pebble", "quill", "willow", "falcon")


@dataclass(frozen=True)
class Worktree:
    """One session worktree: its name, folder, branch, the main checkout, how it was named."""

    name: str
    path: Path
    branch: str
    main_root: Path
    generated: bool = False
    base: str | None = None
    fresh: bool = field(default=False, compare=False)  # made by this `create_worktree` call (not reused)


def _git(args: list[str], cwd: str | os.PathLike[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        completed = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                                   stdin=subprocess.DEVNULL, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except FileNotFoundError:
        raise CommandcodeError("git is not installed", hint="install git to use worktrees") from None
    except subprocess.TimeoutExpired:
        raise CommandcodeError(f"git {args[0]} did not finish within 120 s") from None
    except OSError as error:  # e.g. a working directory deeper than PATH_MAX: git cannot start there
        raise CommandcodeError(f"git {args[0]} cannot run here: {error.strerror or error}") from None
    if check and completed.returncode != 0:
        message = (completed.stderr.strip().splitlines() or ["failed"])[-1]
        raise CommandcodeError(f"git {args[0]}: {message.removeprefix('fatal: ').removeprefix('error: ')}")
    return completed


def _main_root(cwd: str | os.PathLike[str]) -> Path:
    """The main checkout of the repository holding `cwd` (also from inside a linked worktree):
    git checks there is a checkout, the one rule (`config.settings_files.main_checkout`) finds it."""
    if not os.path.isdir(cwd):
        raise CommandcodeError(f"{cwd} is not a folder")
    probe = _git(["rev-parse", "--path-format=absolute", "--show-toplevel"], cwd, check=False)
    if probe.returncode != 0:
        if "must be run in a work tree" in probe.stderr:
            raise CommandcodeError(f"{cwd} is inside a bare repository or a .git folder; worktrees need a checkout")
        raise CommandcodeError(f"not a git repository: {cwd}",
                               hint="worktrees need a git repository: run inside one (or `git init` and commit first)")
    return Path(main_checkout(probe.stdout.strip()))


def settings_root(cwd: str | os.PathLike[str]) -> Path:
    """The folder whose `.commandcode/settings*.json` a session in `cwd` saves to: the main
    checkout when `cwd` is in one of our worktrees (saved permission answers apply to every
    worktree of the repository), else the repository root (the settings' own rule)."""
    root = repository_root(cwd)
    return Path(session_worktree_main(root) or root)


def validate_name(name: str) -> str:
    """`name` when it is a safe worktree name.

    Raises:
        UsageError: it has `/`, `..`, starts with `.` or `-`, or has other characters than
            letters, digits, `.`, `_` and `-` (at most 63).
    """
    if not _NAME.match(name) or ".." in name or name.endswith((".lock", ".")):
        raise UsageError(f"invalid worktree name {name!r}",
                         hint="use letters, digits, '.', '_' and '-' (no '/' or '..'), starting with a letter or digit")
    return name


def generate_name() -> str:
    """A fresh name, e.g. `brisk-otter-3f9a`."""
    return f"{secrets.choice(_ADJECTIVES)}-{secrets.choice(_NOUNS)}-{secrets.token_hex(2)}"


def _base_commit(root: Path, base_ref: str) -> str:
    if _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], root, check=False).returncode != 0:
        raise CommandcodeError(f"the repository {root} has no commits yet",
                               hint="commit once (a worktree branches from a commit), then retry")
    candidates = ["HEAD"] if base_ref == "head" else []
    if base_ref != "head":
        remote = _git(["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"], root, check=False).stdout.strip()
        configured = _git(["config", "init.defaultBranch"], root, check=False).stdout.strip()
        candidates = [remote, *(f"refs/heads/{name}" for name in (configured, "main", "master") if name), "HEAD"]
    for candidate in candidates:
        if not candidate:
            continue
        found = _git(["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"], root, check=False)
        if found.returncode == 0:
            return found.stdout.strip()
    raise CommandcodeError(f"cannot find the default branch of {root}")  # pragma: no cover - HEAD exists


def _exclude(root: Path) -> None:
    common = Path(_git(["rev-parse", "--path-format=absolute", "--git-common-dir"], root).stdout.strip())
    from ..config.settings_files import add_exclude_line

    add_exclude_line(common / "info" / "exclude", EXCLUDE_LINE)


def _ls_ignored(root: Path, extra: list[str]) -> set[str]:
    listed = _git(["ls-files", "-z", "--others", "--ignored", *extra], root).stdout
    return {name for name in listed.split("\0") if name}


def _copy_included(root: Path, destination: Path) -> int:
    """Copies the git-ignored files `.worktreeinclude` names; returns how many."""
    if not (root / INCLUDE_FILE).is_file():
        return 0
    ignored = _ls_ignored(root, ["--exclude-standard"])
    wanted = _ls_ignored(root, [f"--exclude-from={INCLUDE_FILE}"])
    copied = 0
    for name in sorted(ignored & wanted):
        if name.startswith(WORKTREES_FOLDER + os.sep) or name.startswith(".commandcode/worktrees/"):
            continue
        source, target = root / name, destination / name
        if target.exists() or not (source.is_file() or source.is_symlink()):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
        copied += 1
    return copied


def _admin_dir(path: Path) -> Path | None:
    probe = _git(["rev-parse", "--path-format=absolute", "--git-dir"], path, check=False)
    return Path(probe.stdout.strip()) if probe.returncode == 0 else None


def _read_meta(path: Path) -> dict[str, object]:
    admin = _admin_dir(path)
    try:
        data = json.loads((admin / META_NAME).read_text()) if admin is not None else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def create_worktree(repo_cwd: str | os.PathLike[str], name: str | None = None, *,
                    base_ref: str | None = None, project: ProjectContext | None = None) -> Worktree:
    """Creates (or, when it already exists, reuses) the worktree `name` of the repository holding
    `repo_cwd`; a generated name when `name` is None. `base_ref` defaults to the setting
    `worktree.baseRef` of the main checkout ("fresh": the default branch; "head": HEAD), read
    from the caller's context `project` when its settings are the main checkout's.

    Raises:
        UsageError: an unsafe name.
        CommandcodeError: not a repository, no commits yet, the branch is taken, or git failed.
    """
    generated = name is None
    chosen = generate_name() if name is None else validate_name(name)
    root = _main_root(repo_cwd)
    path = root / WORKTREES_FOLDER / chosen
    branch = BRANCH_PREFIX + chosen
    existing = next((tree for tree in list_worktrees(root) if tree.name == chosen), None)
    if existing is not None:
        return existing
    if os.path.lexists(path):
        raise CommandcodeError(f"{path} exists and is not a worktree of this repository",
                               hint="choose another name, or move that folder away")
    if _git(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], root, check=False).returncode == 0:
        raise CommandcodeError(f"the branch {branch} already exists", hint="choose another worktree name, "
                               f"or delete the branch (`git branch -D {branch}`)")
    base = _base_commit(root, base_ref or for_settings_of(root, project).settings().worktree_base_ref)
    _exclude(root)
    _git(["worktree", "add", "--quiet", "-b", branch, str(path), base], root)
    admin = _admin_dir(path)
    if admin is not None:
        atomic_write(admin / META_NAME, json.dumps({"generated": generated, "base": base}).encode())
    try:
        _copy_included(root, path)
    except BaseException:
        abandon_fresh(Worktree(chosen, path, branch, root, generated, base, fresh=True))
        raise
    return Worktree(chosen, path, branch, root, generated, base, fresh=True)


def abandon_fresh(worktree: Worktree | None) -> None:
    """After a launch that failed: removes a worktree made for it, with its branch, when nothing
    was done in it (a reused worktree, or one holding changes or commits, stays). Never raises:
    the launch's own error is the one to show."""
    if worktree is None or not worktree.fresh:
        return
    try:
        if not os.path.isdir(worktree.path) or not changes(worktree):
            _discard(worktree)
    except (CommandcodeError, OSError):
        pass


def list_worktrees(cwd: str | os.PathLike[str]) -> list[Worktree]:
    """The session worktrees (under `.commandcode/worktrees/`) of the repository holding `cwd`."""
    root = _main_root(cwd)
    folder = os.path.realpath(root / WORKTREES_FOLDER)
    found: list[Worktree] = []
    for block in _git(["worktree", "list", "--porcelain", "-z"], root).stdout.split("\0\0"):
        fields = dict(line.partition(" ")[::2] for line in block.split("\0") if line)
        path = fields.get("worktree", "")
        if not path or os.path.dirname(os.path.realpath(path)) != folder:
            continue
        branch = fields.get("branch", "").removeprefix("refs/heads/")
        meta = _read_meta(Path(path)) if os.path.isdir(path) else {}
        base = meta.get("base")
        found.append(Worktree(os.path.basename(path), Path(path), branch, root, meta.get("generated") is True,
                              base if isinstance(base, str) else None))
    return found


def worktree_of(cwd: str | os.PathLike[str]) -> Worktree | None:
    """The session worktree `cwd` is in, or None (not in a repository, or not in one of ours)."""
    marker = os.sep + WORKTREES_FOLDER + os.sep
    if marker not in os.path.realpath(cwd) + os.sep:  # ours all live there: no `git` run for the rest
        return None
    try:
        top = _git(["rev-parse", "--show-toplevel"], cwd, check=False)
    except CommandcodeError:
        return None
    if top.returncode != 0 or not os.path.isdir(cwd):
        return None
    toplevel = os.path.realpath(top.stdout.strip())
    parent = os.path.dirname(toplevel)
    if os.path.basename(parent) != "worktrees" or os.path.basename(os.path.dirname(parent)) != ".commandcode":
        return None
    try:
        return next((tree for tree in list_worktrees(cwd) if os.path.realpath(tree.path) == toplevel), None)
    except CommandcodeError:
        return None


def changes(worktree: Worktree) -> list[str]:
    """What would be lost by removing it: `N changed or untracked files`, `N commits`."""
    found = []
    status = _git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], worktree.path).stdout
    entries = [entry for entry in status.split("\0") if entry]
    if entries:
        found.append(f"{len(entries)} changed or untracked file{'s' if len(entries) != 1 else ''}")
    if worktree.base:
        count = int(_git(["rev-list", "--count", f"{worktree.base}..HEAD"], worktree.path).stdout.strip() or 0)
        if count:
            found.append(f"{count} commit{'s' if count != 1 else ''}")
    return found


def remove_worktree(cwd: str | os.PathLike[str], name: str, *, force: bool = False) -> Worktree:
    """Removes the worktree `name` and its `worktree-NAME` branch.

    Raises:
        CommandcodeError: no such worktree, or it has changes or commits and `force` is off.
    """
    validate_name(name)
    found = next((tree for tree in list_worktrees(cwd) if tree.name == name), None)
    if found is None:
        raise CommandcodeError(f"no worktree named {name!r}", hint="see `commandcode worktrees list`")
    pending = changes(found) if os.path.isdir(found.path) else []
    if pending and not force:
        raise CommandcodeError(f"the worktree {name} has {' and '.join(pending)}; nothing was removed",
                               hint="commit or copy them first, or pass --force to discard them")
    _discard(found)
    return found


def _discard(worktree: Worktree) -> None:
    _git(["worktree", "remove", "--force", str(worktree.path)], worktree.main_root)
    if worktree.branch == BRANCH_PREFIX + worktree.name:
        _git(["branch", "-D", worktree.branch], worktree.main_root, check=False)


def finish_worktree(worktree: Worktree, *, headless: bool, keep: Callable[[str], bool] | None = None) -> str:
    """What happens to a session's worktree when the session ends; returns `"kept"` or
    `"removed"`. Headless runs keep everything. A clean worktree is removed only when its name
    was generated. One with changes or commits asks `keep(question)` (no asker: kept)."""
    if headless or not os.path.isdir(worktree.path):
        return "kept"
    pending = changes(worktree)
    if not pending:
        if worktree.generated:
            _discard(worktree)
            return "removed"
        return "kept"
    question = f"The worktree {worktree.name} has {' and '.join(pending)}. Keep it?"
    if keep is None or keep(question):
        return "kept"
    _discard(worktree)
    return "removed"
