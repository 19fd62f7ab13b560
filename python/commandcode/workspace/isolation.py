"""Worktree isolation: while a session runs in a worktree, no tool call may reach the main checkout.

`check_tool_call(name, tool_input, cwd, worktree)` returns None when the call stays inside the
worktree (or anywhere outside the main checkout), else the refusal the model sees, saying how to
rewrite the call. It looks at:

- the file tools' `file_path` (symlinks resolved, also of the folder of a new file);
- a shell command parsed with the shell's grammar (workspace/shell_grammar.py): every simple command
  anywhere in it (substitutions, subshells, groups, loops, functions, `sh -c`/`eval`/`trap`
  strings, `find -exec`, wrappers such as `env`, `nice`, `timeout`, `xargs`);
- the shell's working directories as they move: `cd`/`pushd` targets, kept as the set of folders
  the shell may be in (a `cd` in a subshell or a branch may or may not have happened);
- every literal word and every redirection target, resolved against each of those folders
  (symlinks followed, a glob also expanded, a `.*` also taken as `..`), and the paths inside a
  word of code (`python -c "open('/main/x', 'w')"`: each piece between quotes, commas, parentheses);
- git redirected there: `git -C DIR`, `--git-dir`, `--work-tree` (also as `--opt=value`), and
  `GIT_DIR`/`GIT_WORK_TREE` given as assignments, `export` or `env`.

What the text cannot show is refused: a redirection target, `cd` or git target built from a
`$VAR`, `$(...)` or backquotes; such a word as an argument of any program but the few that never
write what their arguments name (`echo`, `test`, `grep`, ...); `xargs` feeding such a program
paths from its input; `find` below an unverifiable folder; a relative `cd` in a loop or function
or under a CDPATH; a relative symlink target that climbs (`ln -s ../..`, counted from the link);
`cd -`, `env -C`, a shell reading commands from its input, a dynamic `eval`/`sh -c` string, a
command line that does not parse. The check has no switch: the worktree's isolation is not a
setting.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path
from typing import Any, Protocol

from .shell_commands import SHELLS, WRAPPERS, find_commands, skip_options
from .shell_grammar import ShellSyntaxError, Simple, Word, parse

_GIT_DIR_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE")
_CD = frozenset({"cd", "pushd"})
_FILE_TOOLS = frozenset({"read_file", "write_file", "edit_file"})
_MAX_FOLDERS = 16
# what separates paths inside a word of code or options (`python -c "open('../x')"`, `--out=a,b`)
_EMBEDDED = re.compile(r"[\s'\"`,;:()=\[\]{}<>|&]+")
# Programs that never write a file their arguments name: a `$VAR` among their arguments is harmless.
_READ_ONLY = frozenset({
    "echo", "printf", "test", "[", "true", "false", ":", "cat", "head", "tail", "grep", "egrep", "fgrep", "rg", "wc",
    "ls", "stat", "file", "pwd", "basename", "dirname", "realpath", "readlink", "diff", "cmp", "printenv", "type",
    "which", "expr", "seq", "date", "sleep", "wait", "exit", "return", "shift", "read", "set", "unset", "jq",
    "md5sum", "sha1sum", "sha256sum", "du", "df", "id", "whoami", "uname", "hostname", "break", "continue", "local",
    "getopts", "hash", "kill", "ps", "command", "umask", "times", "ulimit", "nproc"})
# git subcommands that write where their arguments say (outside the repository git runs in)
_GIT_WRITES_ARGUMENTS = frozenset({"clone", "init", "worktree", "archive", "bundle", "format-patch", "submodule"})


class WorktreeLike(Protocol):
    """What the check needs of a worktree: its folder and the main checkout's."""

    @property
    def path(self) -> Path: ...

    @property
    def main_root(self) -> Path: ...


class _Refusal(Exception):
    pass


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Scope:
    def __init__(self, worktree: WorktreeLike) -> None:
        self.worktree = os.path.realpath(worktree.path)
        self.main = os.path.realpath(worktree.main_root)
        self.home_known = True  # False: the command may set HOME, which `~` expands to
        self.cdpath_known = True  # False: CDPATH may send `cd NAME` elsewhere

    def resolve(self, raw: str, cwd: str) -> str:
        expanded = os.path.expanduser(raw)
        joined = expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded)
        real = os.path.realpath(joined)
        if not os.path.lexists(joined):  # a new file: its folder counts
            real = os.path.join(os.path.realpath(os.path.dirname(joined)), os.path.basename(joined))
        return real

    def reaches_main(self, real: str) -> bool:
        return _inside(real, self.main) and not _inside(real, self.worktree)

    def rewrite(self, real: str) -> str:
        relative = os.path.relpath(real, self.main)
        return os.path.join(self.worktree, relative) if relative != "." else self.worktree

    def refusal(self, what: str, real: str, how: str) -> str:
        return (f"Error: {what} reaches the main checkout ({self.main}); this session is isolated in the worktree "
                f"{self.worktree} and may not touch the main checkout. {how}")


def check_tool_call(name: str, tool_input: dict[str, Any], cwd: str | os.PathLike[str],
                    worktree: WorktreeLike | None) -> str | None:
    """None when the tool call stays out of the main checkout, else the refusal text."""
    if worktree is None:
        return None
    scope = _Scope(worktree)
    here = os.path.realpath(os.fspath(cwd))
    if name in _FILE_TOOLS:
        raw = tool_input.get("file_path", tool_input.get("path"))
        if not isinstance(raw, str) or not raw or "\x00" in raw:
            return None  # the tool refuses it itself
        real = scope.resolve(raw, here)
        if scope.reaches_main(real):
            return scope.refusal(f"{name} on {raw}", real, f"Use the worktree's copy instead: {scope.rewrite(real)}")
        return None
    if name == "bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return None
        scope.home_known = "HOME" not in command
        scope.cdpath_known = "CDPATH" not in command and not os.environ.get("CDPATH")
        try:
            if scope.reaches_main(here):
                raise _Refusal(scope.refusal("the shell's working directory", here, f"Run it from {scope.worktree}."))
            _check_command(command, {here}, scope, 0)
        except _Refusal as refusal:
            return str(refusal)
    return None


def _unverifiable(scope: _Scope, what: str) -> _Refusal:
    return _Refusal(f"Error: cannot verify from the command text that {what} stays inside the worktree "
                    f"{scope.worktree} (the main checkout {scope.main} is off limits). Rewrite it with a literal path "
                    f"inside the worktree, or run it from the worktree without redirecting it.")


def _check_command(command: str, folders: set[str], scope: _Scope, depth: int) -> set[str]:
    """Checks every simple command of `command`; returns the folders the shell may be in after it."""
    if depth > 8:
        raise _unverifiable(scope, "this deeply nested command")
    try:
        simples = parse(command)
    except ShellSyntaxError as error:
        raise _unverifiable(scope, f"this command (the shell grammar cannot read it: {error})") from None
    for simple in simples:
        folders = _check_simple(simple, folders, scope, depth)
    return folders


def _check_simple(simple: Simple, folders: set[str], scope: _Scope, depth: int) -> set[str]:
    for assignment in simple.assignments:
        _check_assignment(assignment, folders, scope)
    for redirect in simple.redirects:
        target = redirect.target
        if redirect.op in ("<<", "<<-") or (redirect.op in (">&", "<&") and (target.value or "x").isdigit()) \
                or (redirect.op in (">&", "<&") and target.value == "-"):
            continue
        if not target.literal and target.value is None:
            raise _unverifiable(scope, f"the redirection {redirect.op}{target.raw}")
        _check_path(target, folders, scope, f"the redirection {redirect.op}{target.raw}")
    return _check_words(simple.words, folders, scope, depth, simple.looped) if simple.words else folders


def _check_assignment(word: Word, folders: set[str], scope: _Scope) -> None:
    variable, _, value = word.raw.partition("=")
    if variable in _GIT_DIR_VARIABLES:
        literal = (word.value or "").partition("=")[2] if word.value is not None else None
        if literal is None:
            raise _unverifiable(scope, f"{variable}={value}")
        for folder in folders:
            real = scope.resolve(literal, folder)
            if scope.reaches_main(real):
                raise _Refusal(scope.refusal(f"{variable}={value}", real,
                                             f"Drop {variable} (git finds the worktree's repository by itself) "
                                             f"or point it into {scope.worktree}."))


def _check_words(words: list[Word], folders: set[str], scope: _Scope, depth: int, looped: bool) -> set[str]:
    """Checks one program's words (wrappers unwrapped); returns the folders after it."""
    text = " ".join(word.raw for word in words)
    program = os.path.basename(words[0].value) if words[0].literal and words[0].value else None
    rest = words[1:]
    if program == "env" or program in WRAPPERS:
        return _check_wrapper(program or "", text, rest, folders, scope, depth, looped)
    if program in ("export", "declare", "typeset", "local", "readonly"):
        for word in rest:
            if "=" in word.raw:
                _check_assignment(word, folders, scope)
        return folders
    if program == "eval" or program in ("trap", "alias"):
        return _check_strings(program or "", text, rest, folders, scope, depth)
    if program in SHELLS:
        return _check_shell(words, folders, scope, depth)
    if program in _CD:
        return _check_cd(words, folders, scope, looped)
    if program == "git":
        _check_git(words, folders, scope)
    if program == "find":
        _check_find(words, folders, scope, depth, looped)
    if program == "ln":
        _check_link_targets(rest, scope)
    reads_only = program in _READ_ONLY or (program == "git" and not _git_writes_arguments(words))
    for word in rest:
        if word.value is None:
            if not reads_only:
                raise _unverifiable(scope, f"the argument {word.raw} of `{text}`")
            continue
        _check_path(word, folders, scope, f"the path {word.raw}")
    return folders


def _check_wrapper(program: str, text: str, rest: list[Word], folders: set[str], scope: _Scope, depth: int,
                   looped: bool) -> set[str]:
    """`env`, `xargs`, `nice`, ... : their assignments, then the program they run."""
    if program == "env" and any((word.value or "").startswith(("-C", "--chdir")) for word in rest):
        raise _unverifiable(scope, f"`{text}` (env -C)")
    for word in rest:
        if word.value is not None and "=" in word.value and word.value.partition("=")[0].isidentifier():
            _check_assignment(word, folders, scope)
    inner = skip_options(rest, WRAPPERS[program], program)
    if inner is None:
        raise _unverifiable(scope, f"`{text}`")
    if isinstance(inner, str):
        return _check_command(inner, folders, scope, depth + 1)
    if program == "xargs" and inner and _writes_arguments(inner[0]):
        raise _unverifiable(scope, f"`{text}` (xargs gives {inner[0].raw} paths from its input)")
    return _check_words(inner, folders, scope, depth, looped) if inner else folders


def _check_strings(program: str, text: str, rest: list[Word], folders: set[str], scope: _Scope,
                   depth: int) -> set[str]:
    """`eval`, `trap` and `alias`: the command text they hold, checked as a command."""
    strings = [word for word in rest[:1 if program == "trap" else None]]
    if any(word.value is None for word in strings):
        raise _unverifiable(scope, f"`{text}`")
    joined = [" ".join(word.value or "" for word in strings)] if program == "eval" else \
        [(word.value or "").partition("=")[2] if program == "alias" else word.value or "" for word in strings]
    for nested in joined:
        folders = folders | _check_command(nested, folders, scope, depth + 1)
    return folders


def _writes_arguments(word: Word) -> bool:
    return not (word.literal and os.path.basename(word.value or "") in _READ_ONLY)


def _git_writes_arguments(words: list[Word]) -> bool:
    subcommand = next((word.value for word in words[1:] if word.value and not word.value.startswith("-")), None)
    return subcommand in _GIT_WRITES_ARGUMENTS


def _check_shell(words: list[Word], folders: set[str], scope: _Scope, depth: int) -> set[str]:
    """`sh -c STRING` is checked as a command; `sh SCRIPT` like any program; `sh` alone reads its input."""
    text = " ".join(word.raw for word in words)
    index, runs_string = 1, False
    while index < len(words) and (words[index].value or "").startswith(("-", "+")) and words[index].value != "--":
        value = words[index].value or ""
        runs_string = runs_string or (not value.startswith("--") and "c" in value[1:])
        index += 2 if value in ("-o", "+o") else 1
    index += 1 if index < len(words) and words[index].value == "--" else 0
    if index >= len(words):
        raise _unverifiable(scope, f"`{text}` (it runs commands from its input)")
    if any(word.value is None for word in words[1:]):
        raise _unverifiable(scope, f"`{text}`")
    if runs_string:
        return folders | _check_command(words[index].value or "", folders, scope, depth + 1)
    for word in words[index:]:
        _check_path(word, folders, scope, f"the path {word.raw}")
    return folders


def _check_link_targets(words: list[Word], scope: _Scope) -> None:
    """`ln -s ../../x dir/link`: a relative target counts from the link's folder, not from here,
    so one that climbs (`..`) is unverifiable (an absolute target is checked as any path)."""
    options = [word.value or "" for word in words if (word.value or "").startswith("-")]
    if not any(option.startswith("--symbolic") or (not option.startswith("--") and "s" in option)
               for option in options):
        return
    names = [word for word in words if not (word.value or "-").startswith("-")]
    for word in names[:-1] if len(names) > 1 else names:
        value = word.value or ""
        if not os.path.isabs(value) and ".." in value.split("/"):
            raise _unverifiable(scope, f"the symlink target {word.raw} (it counts from the link's folder)")


def _check_find(words: list[Word], folders: set[str], scope: _Scope, depth: int, looped: bool) -> None:
    """`find`: its folders are checked with the other words; `-exec` commands as commands, where
    `{}` is a path below those folders and anything built around it is unverifiable."""
    for action, inner in find_commands(words):
        for word in inner:
            if word.value is not None and "{}" in word.value and word.value != "{}" and ".." in word.value:
                raise _unverifiable(scope, f"`{word.raw}` in find's {action}")
        literal = [word for word in inner if word.value != "{}"]
        if literal:
            _check_words(literal, folders, scope, depth + 1, looped)


def _check_cd(words: list[Word], folders: set[str], scope: _Scope, looped: bool) -> set[str]:
    text = " ".join(word.raw for word in words)
    targets = [word for word in words[1:] if not (word.value or "").startswith("-") or word.value == "-"]
    if not targets:
        target = _expand(Word("~", "~"), scope)
    elif targets[0].value in (None, "-") or targets[0].glob:
        raise _unverifiable(scope, f"`{text}`")
    else:
        target = _expand(targets[0], scope)
    if not scope.cdpath_known and not target.startswith("/") and target.split("/")[0] not in (".", ".."):
        raise _unverifiable(scope, f"`{text}` (CDPATH may send it elsewhere)")
    if looped and not os.path.isabs(target):
        raise _unverifiable(scope, f"`{text}` (a relative cd in a loop or function may run any number of times)")
    moved = set(folders)
    for folder in folders:
        real = scope.resolve(target, folder)
        if scope.reaches_main(real):
            raise _Refusal(scope.refusal(f"`{text}`", real, f"Use `cd {scope.rewrite(real)}` instead."))
        moved.add(real)
    if len(moved) > _MAX_FOLDERS:
        raise _unverifiable(scope, f"`{text}` (too many folders the shell may be in)")
    return moved


def _check_git(words: list[Word], folders: set[str], scope: _Scope) -> None:
    index = 1
    while index < len(words):
        word = words[index].value
        if word is None:
            raise _unverifiable(scope, f"`git ... {words[index].raw}`")
        option, has_value, inline = word.partition("=")
        if option in ("-C", "--git-dir", "--work-tree") or (word.startswith("-C") and len(word) > 2):
            if option.startswith("-C") and len(option) > 2:
                option, value = "-C", word[2:]
                index += 1
            else:
                following = words[index + 1].value if index + 1 < len(words) else ""
                value = inline if has_value else following or ""
                index += 1 if has_value else 2
            if not value:
                raise _unverifiable(scope, f"`git {option} ...`")
            for folder in folders:
                real = scope.resolve(value, folder)
                if scope.reaches_main(real):
                    how = (f"Run git from the worktree without {option}" +
                           (f", or use `git -C {scope.rewrite(real)}`." if option == "-C" else "."))
                    raise _Refusal(scope.refusal(f"`git {option} {value}`", real, how))
            if option == "-C":
                folders = {scope.resolve(value, folder) for folder in folders}
            continue
        if not word.startswith("-"):
            return
        index += 1


def _expand(word: Word, scope: _Scope) -> str:
    value = word.value or ""
    if not word.raw.startswith("~"):
        return value
    if not scope.home_known:  # `HOME=../..; echo x > ~/f`: the shell's ~ is not ours
        raise _unverifiable(scope, f"`{word.raw}` (the command changes HOME)")
    return os.path.expanduser(value)


def _check_path(word: Word, folders: set[str], scope: _Scope, what: str) -> None:
    """A literal word (or an option's `=value`, or a short option's attached value: `-o../x`)
    that names a path in the main checkout is refused."""
    value = _expand(word, scope)
    candidate = value.partition("=")[2] if value.startswith("-") and "=" in value else value
    if candidate.startswith("-") and not candidate.startswith("--") and len(candidate) > 2:
        candidate = candidate[2:]
    if not candidate or candidate.startswith("-"):
        return
    embedded = [token for token in _EMBEDDED.split(candidate) if token != candidate and ("/" in token or token == "..")]
    for folder in folders:
        for path in [*_paths(candidate, folder, glob_word=word.glob), *embedded]:
            real = scope.resolve(path, folder)
            if scope.reaches_main(real):
                raise _Refusal(scope.refusal(what, real, f"Use the worktree's copy: {scope.rewrite(real)}"))


def _paths(candidate: str, folder: str, *, glob_word: bool) -> list[str]:
    """The paths a word names: itself, and for a glob what it matches now, with `.*`-like parts
    also taken as `..` (the shell's `.*` matches `..`)."""
    if not glob_word:
        return [candidate]
    pattern = candidate if os.path.isabs(candidate) else os.path.join(folder, candidate)
    found = [candidate, *glob.glob(pattern)]
    parts = candidate.split("/")
    if any(part.startswith(".") and set(part) & set("*?[") for part in parts):
        found.append("/".join(".." if part.startswith(".") and set(part) & set("*?[") else part for part in parts))
    return found
