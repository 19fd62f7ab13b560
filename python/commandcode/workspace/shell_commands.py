"""What a shell command line runs, as the permission rules see it: every simple command of the
grammar (workspace/shell_grammar.py), normalized, with the commands that wrappers run taken out.

`invocations(text)` gives one `Invocation` per program run: its words with the leading
assignments dropped and quotes removed (`FOO=1 'rm' x`, `\\rm x` are `rm x`), an absolute path
of the program on PATH shortened to its name (`/bin/rm` is `rm`), and wrappers unwrapped:
`command`, `env`, `exec`, `nice`, `nohup`, `setsid`, `stdbuf`, `timeout`, `ionice`, `taskset`,
`chrt`, `flock`, `sudo`, `doas`, `time`, `builtin`, `chroot`, `setpriv`, `unshare`, `strace` (and a
few more) are dropped, and one with an option the table does not know is unresolved; `sh|bash|dash|zsh|ksh -c
STRING`, `eval`, `env -S` and `flock -c` have their string parsed; `xargs CMD`, `find ... -exec CMD ;`, `trap STRING` and
`alias name=STRING` keep themselves and add what they run (xargs' and find's `{}` are unknown
words).

An invocation is `resolved` when its program name is known from the text. It is not when the
name is built from a variable, a substitution or a glob, when a wrapper's options are not
understood, or when the text does not parse: no allow rule covers it, and every deny rule may.
An `opaque` one runs commands the text does not show (a shell reading a script or its stdin,
`.`/`source`): rules match it as itself, and a deny rule it does not match may still apply.

`Pattern` is a `Bash(...)` rule's specifier: `npm test:*` (these words, then anything), `npm
test` (exactly), or a glob with `*`. `Pattern.match` answers YES, NO or MAYBE (a word that
expands, where the rule looks, could be anything).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass, field

from .shell_grammar import Redirect, ShellSyntaxError, Simple, Word, parse

YES, NO, MAYBE = "yes", "no", "maybe"
_UNKNOWN = Word("<input>", None)  # what xargs or find puts there (no rule can name it)
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash"})
_NO_VALUE, _VALUE = 0, 1
# wrapper: (options without a value, options with a value, positional words before the command)
WRAPPERS: dict[str, tuple[frozenset[str], frozenset[str], int]] = {
    "command": (frozenset({"-p"}), frozenset(), 0),
    "exec": (frozenset({"-c", "-l"}), frozenset({"-a"}), 0),
    "nice": (frozenset(), frozenset({"-n", "--adjustment"}), 0),
    "nohup": (frozenset(), frozenset(), 0),
    "builtin": (frozenset(), frozenset(), 0),
    "time": (frozenset({"-p", "-a", "-v", "-q", "--verbose", "--quiet", "--append", "--portability"}),
             frozenset({"-o", "-f", "--output", "--format"}), 0),
    "setsid": (frozenset({"-c", "-f", "-w", "--ctty", "--fork", "--wait"}), frozenset(), 0),
    "stdbuf": (frozenset(), frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "timeout": (frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}),
                frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "ionice": (frozenset({"-t", "--ignore"}), frozenset({"-c", "-n", "--class", "--classdata"}), 0),
    "sudo": (frozenset({"-E", "-H", "-n", "-S", "-b", "-k", "-P", "--preserve-env", "--non-interactive"}),
             frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group"}), 0),
    "doas": (frozenset({"-n"}), frozenset({"-u", "-C"}), 0),
    # programs that run a command after options this table does not know: with an option, unresolved
    **{name: (frozenset(), frozenset(), 0) for name in ("setpriv", "unshare", "prlimit", "nsenter", "fakeroot",
                                                           "strace", "ltrace", "valgrind", "proxychains")},
    "chroot": (frozenset(), frozenset(), 1),
    "taskset": (frozenset({"-a", "-c", "--all-tasks", "--cpu-list"}), frozenset(), 1),
    "chrt": (frozenset({"-b", "-d", "-f", "-i", "-o", "-r", "-R", "-a", "-m", "-v", "--batch", "--fifo", "--idle",
                        "--other", "--rr", "--deadline", "--reset-on-fork", "--all-tasks", "--verbose"}),
             frozenset({"-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"}), 1),
    "flock": (frozenset({"-s", "-e", "-x", "-u", "-n", "-o", "-F", "--shared", "--exclusive", "--unlock", "--nonblock",
                         "--close", "--no-fork", "--verbose"}),
              frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}), 1),
    "env": (frozenset({"-i", "-0", "-v", "--ignore-environment", "--null", "--debug", "-"}),
            frozenset({"-u", "-C", "--unset", "--chdir"}), 0),
    "xargs": (frozenset({"-0", "-r", "-t", "-p", "-x", "-o", "--null", "--no-run-if-empty", "--verbose",
                         "--interactive", "--exit", "--open-tty"}),
              frozenset({"-I", "-n", "-L", "-P", "-d", "-E", "-s", "-a", "--max-args", "--max-procs", "--delimiter",
                         "--arg-file", "--replace", "--max-lines", "--eof", "--max-chars"}), 0),
}
_KEEP_OUTER = frozenset({"xargs"})
# variables that make a harmless-looking program run another one (or other code)
_STEERING = frozenset({"PATH", "BASH_ENV", "ENV", "PAGER", "GIT_PAGER", "MANPAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
                       "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "LESSOPEN",
                       "LESSCLOSE", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_WORK_TREE", "PROMPT_COMMAND",
                       "SHELLOPTS", "BASHOPTS", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "PYTHONSTARTUP", "PYTHONPATH"})


@dataclass
class Invocation:
    """One program run: `words` (normalized; `words[0]` is the program), `names` a deny or ask
    rule compares the program with, and whether the text resolves it."""

    words: list[Word]
    names: frozenset[str]
    resolved: bool = True
    opaque: bool = False
    text: str = ""
    redirects: list[Redirect] = field(default_factory=list)  # `>out.txt`, `2>&1`: a rule names them after the words

    @property
    def exact(self) -> bool:
        """Whether a rule can name exactly this invocation (every word known)."""
        return self.resolved and all(word.value is not None
                                     for word in [*self.words, *(redirect.target for redirect in self.redirects)])

    def rule(self) -> str:
        """The `Bash(...)` rule that allows this invocation: exactly, when every word is known,
        else its known words and anything after (`Bash(rm:*)` for `xargs rm`)."""
        if not self.resolved:
            return f"Bash({self.text})"
        known: list[str] = []
        for word in self.words:
            if word.value is None:
                return "Bash(" + " ".join(known) + ":*)"
            known.append(shlex.quote(word.value))
        for redirect in self.redirects:
            if redirect.target.value is None:
                return "Bash(" + " ".join(known) + ":*)"
            space = "" if redirect.op in (">&", "<&") else " "
            known.append(f"{redirect.fd}{redirect.op}{space}{shlex.quote(redirect.target.value)}")
        return "Bash(" + " ".join(known) + ")"


def invocations(text: str) -> list[Invocation]:
    """The programs `text` runs, in order; an unparsable text is one unresolved invocation, and
    a text that sets a variable deciding what programs run (`PATH`, `BASH_ENV`, `GIT_PAGER`,
    `LD_PRELOAD`, ...) has every program unresolved."""
    try:
        simples = parse(text)
    except ShellSyntaxError:
        return [_unresolved(text)]
    found: list[Invocation] = []
    for simple in simples:
        if simple.words:
            found.extend(_unwrap(simple.words, _simple_text(simple), redirects=simple.redirects))
    if any(_steers(word) for simple in simples for word in [*simple.assignments, *simple.words]):
        for call in found:
            call.resolved = False
    return found


def _steers(word: Word) -> bool:
    """Whether a word assigns a variable that changes which commands run (as `NAME=...` before a
    program, alone, or as an argument of `export`/`env`/`declare`)."""
    name, equals, _ = word.raw.partition("=")
    name = name.strip("'\"")
    return bool(equals) and (name in _STEERING or name.startswith(("LD_", "GIT_CONFIG", "BASH_FUNC_")))


def _simple_text(simple: Simple) -> str:
    return " ".join(word.raw for word in simple.words) or simple.text


def _unresolved(text: str) -> Invocation:
    return Invocation([Word(text, None)], frozenset(), resolved=False, text=text.strip())


def _program(word: Word) -> tuple[str, frozenset[str]] | None:
    """The normalized name of a command word and the names rules compare it with."""
    if not word.literal or not word.value:
        return None
    value = word.value
    if "/" not in value:
        return value, frozenset({value})
    base = os.path.basename(value)
    found = shutil.which(base) if base else None
    same = False
    if found is not None:
        try:
            same = os.path.samefile(found, value)
        except OSError:
            same = False
    return (base if same else value), frozenset({value, base} - {""})


def _nested(text: str | None, raw: str) -> list[Invocation]:
    return invocations(text) if text is not None else [_unresolved(raw)]


def _unwrap(words: list[Word], text: str, depth: int = 0, *,
            redirects: list[Redirect] | None = None) -> list[Invocation]:
    if depth > 16:
        return [_unresolved(text)]
    program = _program(words[0])
    if program is None:
        return [_unresolved(text)]
    name, names = program
    head = Invocation([Word(words[0].raw, name), *words[1:]], names, text=text, redirects=list(redirects or []))
    base = os.path.basename(name)
    if base in SHELLS:
        return _shell(words, head, text)
    if base == "eval":
        joined = " ".join(word.value or "" for word in words[1:])
        return _nested(joined if all(word.value is not None for word in words[1:]) else None, text)
    if base in (".", "source"):
        head.opaque = True
        return [head]
    if base == "trap" and len(words) > 1:
        return [head, *(_nested(words[1].value, text) if words[1].value not in (None, "-", "") else [])]
    if base == "alias":
        return [head, *(call for word in words[1:] if "=" in (word.value or "=")
                        for call in _nested(None if word.value is None else word.value.partition("=")[2], text))]
    if base == "find":
        return [head, *_find_exec(words, text, depth)]
    if base == "git":
        return [_git(head, text)]
    if base == "command" and any(word.value in ("-v", "-V") for word in words[1:2]):
        return [head]
    spec = WRAPPERS.get(base)
    if spec is None:
        return [head]
    rest = skip_options(words[1:], spec, base)
    if rest is None:
        return [_unresolved(text)]
    if isinstance(rest, str):  # env -S STRING
        return _nested(rest, text)
    if not rest:
        return [head]
    if base == "xargs":
        rest = [*rest, _UNKNOWN]
    inner = _unwrap(rest, text, depth + 1, redirects=head.redirects)
    return [head, *inner] if base in _KEEP_OUTER else inner


def skip_options(words: list[Word], spec: tuple[frozenset[str], frozenset[str], int],
                  base: str) -> list[Word] | str | None:
    """The words after a wrapper's options (and its positional words); a string for `env -S`;
    None when an option is not understood or expands."""
    flags, valued, positional = spec
    index = 0
    while index < len(words):
        value = words[index].value
        if value is None:
            return None
        if base == "env" and "=" in value and not value.startswith("-"):  # env takes any NAME=VALUE
            index += 1
            continue
        if value == "--":
            index += 1
            break
        if not value.startswith("-") or (value == "-" and base != "env"):
            break
        option, equals, _ = value.partition("=")
        if base == "env" and (value.startswith("-S") or option == "--split-string"):  # env -S 'STRING' ARGS...
            attached = value[2:] if value.startswith("-S") else value.partition("=")[2]
            pieces: list[str | None] = [attached] if attached else []
            pieces += [word.value for word in words[index + 1:]]
            known = [piece for piece in pieces if piece is not None]
            return " ".join(known) if len(known) == len(pieces) else None
        if value in flags or (base == "nice" and value[1:].isdigit()):
            index += 1
        elif option in valued:
            index += 1 if equals else 2
        elif (value[:2] in valued and len(value) > 2) or (base == "xargs" and value[:2] in ("-i", "-l", "-e")):  # -oL, -n10, -I{}
            index += 1
        else:
            return None
    after = words[index:]
    if len(after) < positional:
        return []
    after = after[positional:]
    if base == "flock" and after and after[0].value in ("-c", "--command"):  # flock FILE -c STRING
        return after[1].value if len(after) > 1 else None
    return after


_GIT_VALUED = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds"})


def _git(head: Invocation, text: str) -> Invocation:
    """`git [global options] SUBCOMMAND ...` as `git SUBCOMMAND ...`, so that `Bash(git push:*)`
    holds against `git -C . --no-pager push`; `-c`/`--config-env`/`--exec-path` (which can make
    git run any command: `core.pager`, `alias.x=!...`, `core.fsmonitor`) leave it unresolved."""
    index = 1
    words = head.words
    while index < len(words):
        value = words[index].value
        if value is None:
            return _unresolved(text)
        option = value.partition("=")[0]
        if option in ("-c", "--config-env", "--exec-path") or value.startswith("-c"):
            return _unresolved(text)
        if not value.startswith("-"):
            break
        index += 2 if value in _GIT_VALUED else 1
    head.words = [words[0], *words[index:]]
    return head


def _shell(words: list[Word], head: Invocation, text: str) -> list[Invocation]:
    """`sh -c STRING`: the string's commands; a shell reading a script or stdin is opaque."""
    index, runs_string = 1, False
    while index < len(words):
        value = words[index].value
        if value is None:
            return [_unresolved(text)]
        if value == "--" or not value.startswith(("-", "+")):
            break
        if value in ("-o", "+o", "-O", "+O"):
            index += 1
        elif not value.startswith("--") and "c" in value[1:]:
            runs_string = True
        index += 1
    if index < len(words) and words[index].value == "--":
        index += 1
    if runs_string:
        if index >= len(words):
            return [_unresolved(text)]
        return _nested(words[index].value, text)
    head.opaque = True
    return [head]


def find_commands(words: list[Word]) -> list[tuple[str, list[Word]]]:
    """The commands a `find` runs: each `-exec`/`-execdir`/`-ok`/`-okdir` with its words (up to
    `;` or `+`)."""
    found: list[tuple[str, list[Word]]] = []
    index = 1
    while index < len(words):
        action = words[index].value
        if action in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(words) and words[end].value not in (";", "+"):
                end += 1
            found.append((action, words[index + 1:end]))
            index = end
        index += 1
    return found


def _find_exec(words: list[Word], text: str, depth: int) -> list[Invocation]:
    found: list[Invocation] = []
    for _, inner in find_commands(words):
        if inner:
            found.extend(_unwrap([_UNKNOWN if word.value is not None and "{}" in word.value else word
                                  for word in inner], text, depth + 1))
    return found


class Pattern:
    """A `Bash(...)` specifier.

    Raises (from `parse`):
        ValueError: the specifier is not one shell command's words.
    """

    def __init__(self, words: list[Word], *, prefix: bool, glob: re.Pattern[str] | None) -> None:
        self.words, self.prefix, self.glob = words, prefix, glob

    @classmethod
    def parse(cls, spec: str) -> Pattern:
        prefix = spec.endswith(":*")
        body = spec[:-2].rstrip() if prefix else spec
        try:
            simples = parse(body)
        except ShellSyntaxError as error:
            raise ValueError(f"the command does not parse ({error})") from None
        if len(simples) != 1 or simples[0].assignments or not simples[0].words:
            raise ValueError("a rule names one simple command; write one rule per command")
        words = [*simples[0].words, *(redirect.as_word() for redirect in simples[0].redirects)]
        glob = None
        if not prefix and "*" in body:
            glob = re.compile(".*".join(re.escape(piece) for piece in body.split("*")), re.S)
        return cls(words, prefix=prefix, glob=glob)

    def match(self, call: Invocation, *, strict: bool) -> str:
        """YES, NO or MAYBE. `strict` (allow rules): the program as normalized, and an
        unresolved invocation never matches; else any name of the program counts, and an
        unresolved or opaque invocation maybe matches."""
        answer = self._match(call, strict=strict) if call.resolved else NO
        if answer == YES or strict:
            return YES if answer == YES else NO
        return MAYBE if not call.resolved or call.opaque or answer == MAYBE else NO

    def _match(self, call: Invocation, *, strict: bool) -> str:
        names = {call.words[0].value or ""} if strict else set(call.names) | {call.words[0].value or ""}
        rest = [*call.words[1:], *(redirect.as_word() for redirect in call.redirects)]
        if self.glob is not None:
            if any(word.value is None for word in rest):
                first = self.words[0].value
                return MAYBE if first is None or "*" in first or first in names else NO
            tail = "".join(" " + (word.value or "") for word in rest)
            return YES if any(self.glob.fullmatch(name + tail) for name in names) else NO
        if self.words[0].value not in names:
            return NO
        for position, spec in enumerate(self.words[1:]):
            if position >= len(rest):
                return NO
            word = rest[position]
            if word.raw == spec.raw or (word.value is not None and word.value == spec.value):
                continue
            if word.value is None:
                return MAYBE
            return NO
        extra = rest[len(self.words) - 1:]
        if self.prefix or not extra:
            return YES
        return MAYBE if all(word.value is None for word in extra) else NO
