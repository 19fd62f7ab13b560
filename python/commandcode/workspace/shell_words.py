"""The words of dash, the `bash` tool's shell: quoting, expansions and here-doc bodies, read from
the text by `WordLexer`, the part of the grammar's parser (workspace/shell_grammar.py) below the
level of commands.

A `Word` keeps its source text and, when nothing in it expands, its value after quote removal.
The commands inside a word (`$(...)`, backquotes, `${x:-$(...)}`, `$((...))`, an unquoted
here-doc body) are parsed by the parser itself (`parse_list`, `child`), so they are found too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_BLANKS = " \t"
_OPERATORS = ("&&", "||", ";;", "<<-", ">>", "<<", "<&", ">&", "<>", ">|", ";", "&", "|", "(", ")", "<", ">", "\n")
REDIRECTS = frozenset({">>", "<<", "<<-", "<&", ">&", "<>", ">|", "<", ">"})
_ENDS_WORD = set(_BLANKS) | set(";&|()<>\n")
RESERVED_ENDS = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "}"})
_SPECIAL_PARAMETERS = set("@*#?-$!0123456789")
_GLOB = set("*?[")
_REST_OF_WORD = re.compile(r"[^ \t;&|()<>\n]*")


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



class WordLexer:
    """Reading words, operators and here-doc bodies at `pos` of `src`; the parser subclass gives
    `parse_list` (for `$(...)`) and `child` (a parser of its own for backquotes and here-docs)."""

    src: str
    pos: int
    looped: int
    found: list[Any]
    heredocs: list[tuple[Word, bool]]

    def parse_list(self, ends: frozenset[str], *, top: bool) -> None:
        raise NotImplementedError

    def child(self, text: str) -> WordLexer:
        raise NotImplementedError

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
        closes = (-1, -1)  # (end of the unquoted run, its last `]`): a `[` before that `]` is a glob
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
                if char in _GLOB:  # `[` only with a `]` after it (a lone `[` is the test command)
                    if char == "[" and self.pos >= closes[0]:
                        run = _REST_OF_WORD.match(src, self.pos)
                        end = run.end() if run is not None else self.pos
                        closes = (end, src.rfind("]", self.pos, end))
                    glob = glob or char != "[" or closes[1] > self.pos
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
        src, inner = self.src, list[str]()
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
        child = self.child(text)
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
        child = self.child(body)
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

