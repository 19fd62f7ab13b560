"""The shell grammar of the `bash` tool's shell (`/bin/sh`, dash): a command line parsed into every
simple command it can run, for the permission rules (agent/permissions.py) and the worktree guard
(workspace/isolation.py).

`parse(text)` returns the `Simple` commands found anywhere in `text`, in source order: in lists
(`;`, `&`, `&&`, `||`, newlines), pipelines, subshells `( )`, groups `{ ;}`, `if`/`while`/`until`/
`for`/`case`, function bodies, and inside the words themselves: `$(...)`, backquotes, `${x:-$(...)}`,
`$((...))`, and unquoted here-document bodies. The lexing is dash's: `#` starts a comment at the
start of a word, `&` always ends a command (`&>f` is `&` then `>f`; there is no `|&`, `<<<` or
`$'...'`), a backslash-newline joins lines anywhere, a quoted here-doc delimiter keeps the body
literal. A compound command's redirections (`{ ...; } >f`) come as a `Simple` with no words.

A `Word` (workspace/shell_words.py, which reads words, quotes, expansions and here-doc bodies)
knows its value after quote removal when nothing in it expands (`value`), else None, and its
source text (`raw`). Text the grammar cannot parse raises `ShellSyntaxError`, which dash
would refuse too (possibly after running the commands before it: callers treat it as unknown).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .shell_words import REDIRECTS, RESERVED_ENDS, ShellSyntaxError, Word, WordLexer

__all__ = ["Redirect", "ShellSyntaxError", "Simple", "Word", "parse"]


@dataclass
class Redirect:
    """`op` (`>`, `>>`, `<`, `>&`, `<<`, ...), its target word (a here-doc's delimiter) and the
    file descriptor written before it (`2` in `2>&1`; empty when none)."""

    op: str
    target: Word
    fd: str = ""

    def as_word(self) -> Word:
        """The redirection as one word (`2>&1`, `>out.txt`), for rules that name it."""
        return Word(f"{self.fd}{self.op}{self.target.raw}",
                    None if self.target.value is None else f"{self.fd}{self.op}{self.target.value}")


@dataclass
class Simple:
    """One simple command: its leading assignments, its words, its redirections; `looped` when it
    sits in a loop or function body (it may run any number of times, in any directory)."""

    assignments: list[Word] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    looped: bool = False
    text: str = ""


def parse(text: str) -> list[Simple]:
    """Every simple command of `text`, in source order.

    Raises:
        ShellSyntaxError: dash would refuse the text.
    """
    parser = _Parser(text)
    try:
        parser.parse_list(frozenset(), top=True)
    except RecursionError:
        raise ShellSyntaxError("nested too deeply to check") from None
    if parser.pos < len(parser.src):
        raise ShellSyntaxError(f"unexpected {parser.src[parser.pos]!r}")
    return parser.found


class _Parser(WordLexer):
    def __init__(self, src: str, looped: int = 0) -> None:
        self.src = src
        self.pos = 0
        self.found: list[Simple] = []
        self.looped = looped
        self.heredocs: list[tuple[Word, bool]] = []  # waiting for the next newline

    # Lexing ----------------------------------------------------------------------------------

    def child(self, text: str) -> _Parser:
        return _Parser(text, self.looped)

    def _linebreaks(self) -> None:
        while self._peek_operator() == "\n":
            self._take_operator("\n")

    def parse_list(self, ends: frozenset[str], *, top: bool) -> None:
        """and-or lists separated by `;`, `&` and newlines, up to one of the reserved words
        `ends`, a `)`, a `;;` or the end."""
        while True:
            self._linebreaks()
            if self.pos >= len(self.src):
                return
            operator = self._peek_operator()
            if operator in (")", ";;"):
                if top and operator == ")":
                    raise ShellSyntaxError("unexpected )")
                return
            if operator in (";", "&", "&&", "||", "|"):
                raise ShellSyntaxError(f"unexpected {operator}")
            if self._peek_word() in ends or self._peek_word() in RESERVED_ENDS:
                return
            self._and_or()
            operator = self._peek_operator()
            if operator in (";", "&", "\n"):
                self._take_operator(operator)
            else:
                return

    def _and_or(self) -> None:
        while True:
            self._pipeline()
            operator = self._peek_operator()
            if operator not in ("&&", "||"):
                return
            self._take_operator(operator)
            self._linebreaks()

    def _pipeline(self) -> None:
        if self._peek_word() == "!":
            self._word()
        while True:
            self._command()
            if self._peek_operator() != "|":
                return
            self._take_operator("|")
            self._linebreaks()

    def _expect(self, keyword: str) -> None:
        self._linebreaks()
        if self._peek_word() != keyword:
            raise ShellSyntaxError(f"expected {keyword!r}")
        self._word()

    def _body(self, ends: frozenset[str], *, loop: bool = False) -> None:
        self.looped += loop
        self.parse_list(ends, top=False)
        self.looped -= loop

    def _command(self) -> None:
        keyword = self._peek_word()
        start = self.pos
        if self._peek_operator() == "(":
            self._take_operator("(")
            self.parse_list(frozenset(), top=False)
            if self._peek_operator() != ")":
                raise ShellSyntaxError("unterminated (")
            self._take_operator(")")
        elif keyword == "{":
            self._word()
            self._body(frozenset({"}"}))
            self._expect("}")
        elif keyword == "if":
            self._word()
            self._body(frozenset({"then"}))
            self._expect("then")
            self._body(frozenset({"elif", "else", "fi"}))
            while (branch := self._peek_word()) in ("elif", "else"):
                self._word()
                if branch == "elif":
                    self._body(frozenset({"then"}))
                    self._expect("then")
                self._body(frozenset({"elif", "else", "fi"}))
            self._expect("fi")
        elif keyword in ("while", "until"):
            self._word()
            self._body(frozenset({"do"}), loop=True)
            self._do_group()
        elif keyword == "for":
            self._for()
        elif keyword == "case":
            self._case()
        else:
            self._simple(start)
            return
        self._trailing_redirects(start)

    def _do_group(self) -> None:
        self._expect("do")
        self._body(frozenset({"done"}), loop=True)
        self._expect("done")

    def _for(self) -> None:
        self._word()
        name = self._word()
        if name is None:
            raise ShellSyntaxError("for without a name")
        self._linebreaks()
        if self._peek_word() == "in":
            self._word()
            while self._peek_operator() is None:
                if self._word() is None:
                    break
            if self._peek_operator() in (";", "\n"):
                self._take_operator(self._peek_operator() or ";")
        elif self._peek_operator() == ";":
            self._take_operator(";")
        self._do_group()

    def _case(self) -> None:
        self._word()
        if self._word() is None:
            raise ShellSyntaxError("case without a word")
        self._expect("in")
        while True:
            self._linebreaks()
            if self._peek_word() == "esac":
                self._word()
                return
            if self._peek_operator() == "(":
                self._take_operator("(")
            while True:  # the patterns: words separated by `|`, then `)`
                if self._word() is None:
                    raise ShellSyntaxError("case pattern expected")
                operator = self._peek_operator()
                if operator == "|":
                    self._take_operator("|")
                    continue
                if operator != ")":
                    raise ShellSyntaxError("case pattern without )")
                self._take_operator(")")
                break
            self._body(frozenset({"esac"}))
            if self._peek_operator() == ";;":
                self._take_operator(";;")
            elif self._peek_word() != "esac":
                raise ShellSyntaxError("expected ;; or esac")

    def _redirect(self, operator: str, simple: Simple, fd: str) -> None:
        self._take_operator(operator)
        target = self._word()
        if target is None:
            raise ShellSyntaxError(f"no target after {operator}")
        simple.redirects.append(Redirect(operator, target, fd))
        if operator in ("<<", "<<-"):
            self.heredocs.append((target, operator == "<<-"))

    def _io_number(self) -> bool:
        """Whether the next characters are digits right before a redirection (`2>`)."""
        self._skip_blanks()
        end = self.pos
        while end < len(self.src) and self.src[end].isdigit():
            end += 1
        return end > self.pos and end < len(self.src) and self.src[end] in "<>"

    def _trailing_redirects(self, start: int) -> None:
        simple = Simple(looped=self.looped > 0)
        while True:
            fd = self._word_digits() if self._io_number() else ""
            operator = self._peek_operator()
            if operator not in REDIRECTS:
                break
            self._redirect(operator, simple, fd)
        if simple.redirects:
            simple.text = self.src[start:self.pos].strip()
            self.found.append(simple)

    def _word_digits(self) -> str:
        start = self.pos
        while self.src[self.pos].isdigit():
            self.pos += 1
        return self.src[start:self.pos]

    def _simple(self, start: int) -> None:
        simple = Simple(looped=self.looped > 0)
        while True:
            fd = self._word_digits() if self._io_number() else ""
            operator = self._peek_operator()
            if operator in REDIRECTS:
                self._redirect(operator, simple, fd)
                continue
            if operator is not None:
                if operator == "(" and len(simple.words) == 1 and not simple.assignments:
                    self._function(simple.words[0])
                    return
                break
            word = self._word()
            if word is None:
                break
            name, equals, _ = word.raw.partition("=")
            if not simple.words and equals and name and (name[0] == "_" or name[0].isalpha()) \
                    and all(char == "_" or char.isalnum() for char in name):
                simple.assignments.append(word)
            else:
                simple.words.append(word)
        if not (simple.words or simple.assignments or simple.redirects):
            raise ShellSyntaxError(f"unexpected {self.src[self.pos:self.pos + 1]!r}")
        simple.text = self.src[start:self.pos].strip()
        self.found.append(simple)

    def _function(self, name: Word) -> None:
        """`name()` read up to its `(`: `)` then the body, a compound command."""
        self._take_operator("(")
        if self._peek_operator() != ")":
            raise ShellSyntaxError("expected ) in a function definition")
        self._take_operator(")")
        self._linebreaks()
        self.looped += 1
        self._command()
        self.looped -= 1
