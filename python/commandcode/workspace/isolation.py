"""Worktree isolation: while a session runs in a worktree, no tool call may reach the main checkout.

`check_tool_call(name, tool_input, cwd, worktree)` returns None when the call stays inside the
worktree (or anywhere outside the main checkout), else the refusal the model sees, saying how to
rewrite the call. It looks at:

- the file tools' `file_path` (symlinks resolved, also of the folder of a new file);
- a shell command's working directory as it moves: `cd`/`pushd` targets, followed through `&&`,
  `;`, `|` and subshells;
- every word of a shell command that names a path in the main checkout;
- git redirected there: `git -C DIR`, `--git-dir`, `--work-tree` (also as `--opt=value`), and
  `GIT_DIR`/`GIT_WORK_TREE` given as assignments, `export` or `env`.

A target that cannot be verified from the command text (a `$VAR` or `$(...)` in a `cd` or git
target, `cd -`, `eval`, a nested `sh -c` that runs git or cd, unbalanced quotes) is refused as
well. The check has no switch: the worktree's isolation is not a setting.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any, Protocol

_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "\n", ";;", "|&"})
_GIT_DIR_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE")
_CD = frozenset({"cd", "pushd"})
_NESTED_SHELLS = frozenset({"sh", "bash", "zsh", "dash"})
_FILE_TOOLS = frozenset({"read_file", "write_file", "edit_file"})


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
        try:
            _check_command(command, here, scope)
        except _Refusal as refusal:
            return str(refusal)
    return None


def _words(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    lexer.whitespace = " \t\r"
    return list(lexer)


def _unverifiable(scope: _Scope, what: str) -> _Refusal:
    return _Refusal(f"Error: cannot verify from the command text that {what} stays inside the worktree "
                    f"{scope.worktree} (the main checkout {scope.main} is off limits). Rewrite it with a literal path "
                    f"inside the worktree, or run it from the worktree without redirecting it.")


def _dynamic(word: str) -> bool:
    return "$" in word or "`" in word


def _check_command(command: str, cwd: str, scope: _Scope) -> None:
    try:
        words = [word.replace("\n", "") if word != "\n" else word for word in _words(command.replace("\n", " ; "))]
    except ValueError:  # unbalanced quotes: nothing can be verified
        if any(marker in command for marker in ("cd", "git", scope.main)):
            raise _unverifiable(scope, "this command") from None
        return
    if scope.reaches_main(cwd):
        raise _Refusal(scope.refusal("the shell's working directory", cwd, f"Run it from {scope.worktree}."))
    current = cwd
    simple: list[str] = []
    for word in [*words, ";"]:
        if word in _SEPARATORS or set(word) <= set(";&|()"):
            if simple:
                current = _check_simple(simple, current, scope)
            simple = []
        else:
            simple.append(word)


def _check_assignment(word: str, current: str, scope: _Scope) -> None:
    variable, _, value = word.partition("=")
    if variable in _GIT_DIR_VARIABLES:
        if _dynamic(value):
            raise _unverifiable(scope, f"{variable}={value}")
        real = scope.resolve(value, current)
        if scope.reaches_main(real):
            raise _Refusal(scope.refusal(f"{variable}={value}", real,
                                         f"Drop {variable} (git finds the worktree's repository by itself) "
                                         f"or point it into {scope.worktree}."))


def _check_simple(words: list[str], current: str, scope: _Scope) -> str:
    """Checks one simple command; returns the working directory after it."""
    index = 0
    while index < len(words) and "=" in words[index] and not words[index].startswith("=") \
            and words[index].partition("=")[0].isidentifier():
        _check_assignment(words[index], current, scope)
        index += 1
    rest = words[index:]
    while rest and rest[0] in ("env", "command", "exec", "nohup", "time", "sudo"):
        rest = rest[1:]
        while rest and "=" in rest[0] and rest[0].partition("=")[0].isidentifier():
            _check_assignment(rest[0], current, scope)
            rest = rest[1:]
        while rest and rest[0].startswith("-"):
            rest = rest[1:]
    if not rest:
        return current
    program = os.path.basename(rest[0])
    if program in ("export", "declare", "typeset", "local", "readonly"):
        for word in rest[1:]:
            if "=" in word:
                _check_assignment(word, current, scope)
        return current
    if program == "eval":
        raise _unverifiable(scope, "`eval`")
    if program in _NESTED_SHELLS and "-c" in rest:
        nested = rest[rest.index("-c") + 1] if rest.index("-c") + 1 < len(rest) else ""
        _check_command(nested, current, scope)
        return current
    if program in _CD:
        return _check_cd(rest, current, scope)
    if program == "git":
        _check_git(rest, current, scope)
    for word in rest[1:]:
        _check_word(word, current, scope)
    return current


def _check_cd(words: list[str], current: str, scope: _Scope) -> str:
    targets = [word for word in words[1:] if not word.startswith("-") or word == "-"]
    if not targets:
        target = os.path.expanduser("~")
    elif targets[0] == "-" or _dynamic(targets[0]):
        raise _unverifiable(scope, f"`{' '.join(words)}`")
    else:
        target = targets[0]
    real = scope.resolve(target, current)
    if scope.reaches_main(real):
        raise _Refusal(scope.refusal(f"`{' '.join(words)}`", real, f"Use `cd {scope.rewrite(real)}` instead."))
    return real


def _check_git(words: list[str], current: str, scope: _Scope) -> None:
    index = 1
    while index < len(words):
        word = words[index]
        option, has_value, inline = word.partition("=")
        if option in ("-C", "--git-dir", "--work-tree"):
            value = inline if has_value else (words[index + 1] if index + 1 < len(words) else "")
            index += 1 if has_value else 2
            if not value or _dynamic(value):
                raise _unverifiable(scope, f"`git {option} {value}`")
            real = scope.resolve(value, current)
            if scope.reaches_main(real):
                how = (f"Run git from the worktree without {option}" +
                       (f", or use `git -C {scope.rewrite(real)}`." if option == "-C" else "."))
                raise _Refusal(scope.refusal(f"`git {option} {value}`", real, how))
            if option == "-C":
                current = real
            continue
        if word.startswith("-C") and len(word) > 2:  # -Cdir
            value = word[2:]
            if _dynamic(value):
                raise _unverifiable(scope, f"`git {word}`")
            real = scope.resolve(value, current)
            if scope.reaches_main(real):
                raise _Refusal(scope.refusal(f"`git {word}`", real, f"Use `git -C {scope.rewrite(real)}`."))
            index += 1
            continue
        if not word.startswith("-"):
            return
        index += 1


def _check_word(word: str, current: str, scope: _Scope) -> None:
    candidate = word.partition("=")[2] if word.startswith("-") and "=" in word else word
    if not candidate or candidate.startswith("-") or _dynamic(candidate):
        return
    if not (os.path.isabs(candidate) or candidate.startswith(("~", ".")) or "/" in candidate):
        return
    real = scope.resolve(candidate, current)
    if scope.reaches_main(real):
        raise _Refusal(scope.refusal(f"the path {word}", real, f"Use the worktree's copy: {scope.rewrite(real)}"))
