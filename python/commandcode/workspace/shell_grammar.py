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

A `Word` knows its value after quote removal when nothing in it expands (`value`), else None,
and its source text (`raw`). Text the grammar cannot parse raises `ShellSyntaxError`, which dash
would refuse too (possibly after running the commands before it: callers treat it as unknown).
"""

from __future__ import annotations

from dataclasses import dataclass, field

_BLANKS = " \t"
_OPERATORS = ("&&", "||", ";;", "<<-", ">>", "<<", "<&", ">&", "<>", ">|", ";", "&", "|", "(", ")", "<", ">", "\n")
_REDIRECTS = frozenset({">>", "<<", "<<-", "<&", ">&", "<>", ">|", "<", ">"})
_ENDS_WORD = set(_BLANKS) | set(";&|()<>\n")
_RESERVED_ENDS = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "}"})
_SPECIAL_PARAMETERS = set("@*#?-$!0123456789")
_GLOB = set("*?[")


class ShellSyntaxError(ValueError):
    """The text is not a complete dash command line (unbalanced quotes, an unexpected token)."""


@dataclass
class Word:
    """One shell word: `raw` as written, `value` after quote removal (None when it expands:
    a parameter, a substitution, an arithmetic expansion), `glob` when an unquoted `*?[` is in it,
    `quoted` when any quoting was used (such a word is never a reserved word)."""

    raw: str
    value: str | None
    glob: bool = False
    quoted: bool = False

    @property
    def literal(self) -> bool:
        return self.value is not None and not self.glob


@dataclass
class Redirect:
    """`op` (`>`, `>>`, `<`, `>&`, `<<`, ...) and its target word (a here-doc's delimiter)."""

    op: str
    target: Word


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
    parser.parse_list(frozenset(), top=True)
    if parser.pos < len(parser.src):
        raise ShellSyntaxError(f"unexpected {parser.src[parser.pos]!r}")
    return parser.found


class _Parser:
    def __init__(self, src: str, looped: int = 0) -> None:
        self.src = src
        self.pos = 0
        self.found: list[Simple] = []
        self.looped = looped
        self.heredocs: list[tuple[Word, bool]] = []  # waiting for the next newline

    # Lexing ----------------------------------------------------------------------------------

    def _skip_blanks(self) -> None:
        while self.pos < len(self.src):
            char = self.src[self.pos]
            if char in _BLANKS:
                self.pos += 1
            elif self.src.startswith("\\\n", self.pos):
                self.pos += 2
            elif char == "#":
                while self.pos < len(self.src) and self.src[self.pos] != "\n":
                    self.pos += 1
            else:
                return

    def _peek_operator(self) -> str | None:
        self._skip_blanks()
        for operator in _OPERATORS:
            if self.src.startswith(operator, self.pos):
                return operator
        return None

    def _take_operator(self, operator: str) -> None:
        self.pos += len(operator)
        if operator == "\n":
            self._read_heredocs()

    def _peek_word(self) -> str | None:
        """The raw text of the next word if it is a plain reserved-word candidate (no quoting)."""
        self._skip_blanks()
        end = self.pos
        while end < len(self.src) and self.src[end] not in _ENDS_WORD and self.src[end] not in "'\"\\$`":
            end += 1
        if end < len(self.src) and self.src[end] not in _ENDS_WORD:
            return None
        return self.src[self.pos:end] or None

    def _word(self) -> Word | None:
        """The next word, or None at an operator or the end."""
        self._skip_blanks()
        start = self.pos
        value: list[str] | None = []
        glob = quoted = False
        src = self.src
        while self.pos < len(src):
            char = src[self.pos]
            if char in _ENDS_WORD:
                break
            if char == "\\":
                if src.startswith("\\\n", self.pos):
                    self.pos += 2
                    continue
                quoted = True
                if self.pos + 1 < len(src) and value is not None:
                    value.append(src[self.pos + 1])
                self.pos += 2
            elif char == "'":
                quoted = True
                end = src.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                if value is not None:
                    value.append(src[self.pos + 1:end])
                self.pos = end + 1
            elif char == '"':
                quoted = True
                if not self._double_quoted(value):
                    value = None
            elif char == "$" or char == "`":
                if self._expansion():
                    value = None
                elif value is not None:
                    value.append("$")
            else:
                glob = glob or char in _GLOB
                if value is not None:
                    value.append(char)
                self.pos += 1
        if self.pos == start:
            return None
        return Word(src[start:self.pos], None if value is None else "".join(value), glob, quoted)

    def _double_quoted(self, value: list[str] | None) -> bool:
        """Reads `"..."`; False when something in it expands."""
        src, literal = self.src, True
        self.pos += 1
        while True:
            if self.pos >= len(src):
                raise ShellSyntaxError("unterminated double quote")
            char = src[self.pos]
            if char == '"':
                self.pos += 1
                return literal
            if char == "\\" and self.pos + 1 < len(src):
                following = src[self.pos + 1]
                if following != "\n" and value is not None:
                    value.append(following if following in '$`"\\' else "\\" + following)
                self.pos += 2
            elif char in "$`":
                if self._expansion():
                    literal = False
                elif value is not None:
                    value.append("$")
            else:
                if value is not None:
                    value.append(char)
                self.pos += 1

    def _expansion(self) -> bool:
        """Reads an expansion at `pos` (`$name`, `${...}`, `$(...)`, `$((...))`, backquotes),
        collecting the commands inside; False for a lone `$` (taken as a character)."""
        src, pos = self.src, self.pos
        if src[pos] == "`":
            self._backquoted()
            return True
        following = src[pos + 1] if pos + 1 < len(src) else ""
        if src.startswith("$((", pos):
            self.pos += 3
            self._arithmetic()
            return True
        if following == "(":
            self.pos += 2
            self._substitution()
            return True
        if following == "{":
            self.pos += 2
            self._braced_parameter()
            return True
        if following in _SPECIAL_PARAMETERS:
            self.pos += 2
            return True
        if following == "_" or following.isalpha():
            self.pos += 1
            while self.pos < len(src) and (src[self.pos] == "_" or src[self.pos].isalnum()):
                self.pos += 1
            return True
        self.pos += 1
        return False

    def _substitution(self) -> None:
        """`$(` is read; parses the list up to its `)`."""
        self.parse_list(frozenset(), top=False)
        if self._peek_operator() != ")":
            raise ShellSyntaxError("unterminated $(")
        self.pos += 1

    def _arithmetic(self) -> None:
        """The inside of `$((...))`: words, nested expansions, balanced parentheses."""
        depth, src = 0, self.src
        while self.pos < len(src):
            char = src[self.pos]
            if char in "$`":
                self._expansion()
                continue
            if char == "(":
                depth += 1
            elif char == ")":
                if depth == 0 and src.startswith("))", self.pos):
                    self.pos += 2
                    return
                depth -= 1
            self.pos += 1
        raise ShellSyntaxError("unterminated $((")

    def _braced_parameter(self) -> None:
        """`${` is read: the parameter, then a word (with its quotes and expansions) up to `}`."""
        src = self.src
        while self.pos < len(src):
            char = src[self.pos]
            if char == "}":
                self.pos += 1
                return
            if char == "\\":
                self.pos += 2
            elif char == "'":
                end = src.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                self.pos = end + 1
            elif char == '"':
                self._double_quoted(None)
            elif char in "$`":
                self._expansion()
            else:
                self.pos += 1
        raise ShellSyntaxError("unterminated ${")

    def _backquoted(self) -> None:
        """A backquoted substitution: the text up to the next unescaped backquote, with `\\\\`,
        `\\``, `\\$` unescaped, parsed on its own."""
        src, inner = self.src, []
        self.pos += 1
        while self.pos < len(src):
            char = src[self.pos]
            if char == "`":
                self.pos += 1
                self._sub_parse("".join(inner))
                return
            if char == "\\" and self.pos + 1 < len(src) and src[self.pos + 1] in "\\`$":
                inner.append(src[self.pos + 1])
                self.pos += 2
                continue
            inner.append(char)
            self.pos += 1
        raise ShellSyntaxError("unterminated backquote")

    def _sub_parse(self, text: str) -> None:
        child = _Parser(text, self.looped)
        child.parse_list(frozenset(), top=True)
        if child.pos < len(child.src):
            raise ShellSyntaxError(f"unexpected {child.src[child.pos]!r}")
        self.found.extend(child.found)

    def _read_heredocs(self) -> None:
        """After a newline: the bodies of the here-docs opened on the line just ended."""
        pending, self.heredocs = self.heredocs, []
        for delimiter, strip_tabs in pending:
            end_mark = delimiter.value if delimiter.value is not None else delimiter.raw
            body: list[str] = []
            while True:
                if self.pos >= len(self.src):
                    break  # dash: end of file ends the here-doc
                newline = self.src.find("\n", self.pos)
                line = self.src[self.pos:newline if newline >= 0 else len(self.src)]
                self.pos = newline + 1 if newline >= 0 else len(self.src)
                if (line.lstrip("\t") if strip_tabs else line) == end_mark:
                    break
                body.append(line)
            if not delimiter.quoted:
                self._heredoc_expansions("\n".join(body))

    def _heredoc_expansions(self, body: str) -> None:
        child = _Parser(body, self.looped)
        while child.pos < len(body):
            char = body[child.pos]
            if char == "\\":
                child.pos += 2
            elif char in "$`":
                child._expansion()
            else:
                child.pos += 1
        self.found.extend(child.found)

    # Parsing -----------------------------------------------------------------------------------

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
            if self._peek_word() in ends or self._peek_word() in _RESERVED_ENDS:
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

    def _redirect(self, operator: str, simple: Simple) -> None:
        self._take_operator(operator)
        target = self._word()
        if target is None:
            raise ShellSyntaxError(f"no target after {operator}")
        simple.redirects.append(Redirect(operator, target))
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
            if self._io_number():
                self._word_digits()
            operator = self._peek_operator()
            if operator not in _REDIRECTS:
                break
            self._redirect(operator, simple)
        if simple.redirects:
            simple.text = self.src[start:self.pos].strip()
            self.found.append(simple)

    def _word_digits(self) -> None:
        while self.src[self.pos].isdigit():
            self.pos += 1

    def _simple(self, start: int) -> None:
        simple = Simple(looped=self.looped > 0)
        while True:
            if self._io_number():
                self._word_digits()
            operator = self._peek_operator()
            if operator in _REDIRECTS:
                self._redirect(operator, simple)
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
