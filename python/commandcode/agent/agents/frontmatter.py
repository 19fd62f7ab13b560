"""The front matter of an agent file: `parse_front_matter(text)` → (fields, body).

The real CLI (1.64.0) splits a Markdown file at `^---\\n(yaml)\\n---\\n(body)$` (a BOM dropped,
CRLF allowed), parses the YAML with a full YAML library, and keeps each top-level value as a
string (`String(value).trim()`; null becomes `""`), each sequence as a list of such strings, and
ignores nested mappings. A file without front matter is all body. This module reads the part of
YAML that agent files use: `key: value` lines with plain, single- and double-quoted scalars
(plain ones may continue on more-indented lines, `# comments` end them), flow sequences
`[a, "b"]`, block sequences (`- item`), block scalars (`|`, `>`, with `-`/`+`), and nested
mappings (skipped, as the real CLI skips them). What YAML refuses, it refuses too, with
`FrontMatterError` (a one-line reason): a duplicate key, a tab indent, an unterminated quote, an
alias (`*name`; the real CLI first quotes a bare `tools: *`), a `key: a: b` plain value, a line
that is no `key: value`.
"""

from __future__ import annotations

import re

from ...errors import CommandcodeError

_SPLIT = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$")
_BARE_WILDCARD = re.compile(r"^(\s*tools:\s*)\*\s*$", re.MULTILINE)
_KEY = re.compile(r"""^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"\-?:,\[\]{}][^:#]*?|-[^\s:][^:#]*?)\s*:(?:\s+(.*))?$""")
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "/": "/", " ": " ", "e": "\x1b",
            "b": "\b", "f": "\f", "a": "\a", "v": "\v", "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}

Value = str | list[str]


class FrontMatterError(CommandcodeError):
    """An agent file's front matter is not the YAML the real CLI would read."""


def parse_front_matter(text: str) -> tuple[dict[str, Value], str]:
    """(fields, body): the top-level scalar and sequence fields as the real CLI keeps them, and
    the body (the system prompt) stripped.

    Raises:
        FrontMatterError: the front matter is not valid YAML (the message is the reason).
    """
    text = _BARE_WILDCARD.sub(r"\1'*'", text.removeprefix("\ufeff"))
    match = _SPLIT.match(text)
    if match is None:
        return {}, text.strip()
    return _Parser(match.group(1).replace("\r\n", "\n").split("\n")).mapping(), match.group(2).strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


class _Parser:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.position = 0

    def fail(self, reason: str) -> FrontMatterError:
        return FrontMatterError(f"invalid YAML: {reason} (front matter line {self.position + 1})")

    def mapping(self) -> dict[str, Value]:
        fields: dict[str, Value] = {}
        seen: set[str] = set()
        while self.position < len(self.lines):
            line = self.lines[self.position]
            if line.lstrip(" ")[:1] == "\t" and line.strip():
                raise self.fail("a tab character cannot indent")
            if _blank(line):
                self.position += 1
                continue
            if _indent(line):
                raise self.fail("bad indentation of a mapping entry")
            match = _KEY.match(line.rstrip())
            if match is None:
                raise self.fail(f"expected `key: value`, found {line.strip()[:60]!r}")
            key = _unquote_key(match.group(1).strip())
            if key in seen:
                raise self.fail(f"duplicated mapping key {key!r}")
            seen.add(key)
            self.position += 1
            value = self.value((match.group(2) or "").strip())
            if value is not None:
                fields[key] = value
        return fields

    def continuation(self) -> list[str]:
        """The following lines indented more than the key (blank ones kept), consumed."""
        taken: list[str] = []
        while self.position < len(self.lines):
            line = self.lines[self.position]
            if line.strip() and _indent(line) == 0:
                break
            taken.append(line)
            self.position += 1
        while taken and not taken[-1].strip():
            taken.pop()
        if any(line.strip() and line.lstrip(" ")[:1] == "\t" for line in taken):
            raise self.fail("a tab character cannot indent")
        return taken

    def value(self, raw: str) -> Value | None:
        """One key's value (None: a nested mapping, which the real CLI skips)."""
        if raw[:1] in ("|", ">"):
            return _block_scalar(raw, self.continuation(), self)
        if raw.startswith("#"):
            raw = ""
        if raw == "":
            block = self.continuation()
            items = [line for line in block if not _blank(line)]
            if not items:
                return ""
            if items[0].lstrip().startswith("- ") or items[0].strip() == "-":
                return self.block_sequence(items)
            if all(":" in line for line in items):
                return None  # a nested mapping
            return _fold([line.strip() for line in block], self)
        if raw.startswith("["):
            while raw.count("[") > raw.count("]") and self.position < len(self.lines):
                raw += " " + self.lines[self.position].strip()
                self.position += 1
            return _flow_sequence(raw, self)
        if raw.startswith("{"):
            self.continuation()
            return None
        if raw[0] in "\"'":
            text, rest = _quoted(raw, self)
            if rest and not rest.startswith("#"):
                raise self.fail(f"unexpected text after a quoted value: {rest[:40]!r}")
            return text
        more = [line.strip() for line in self.continuation()]
        return _plain(" ".join([raw, *[line for line in more if line]]) if more else raw, self)

    def block_sequence(self, items: list[str]) -> list[str]:
        values: list[str] = []
        for line in items:
            item = line.strip()
            if not (item.startswith("- ") or item == "-"):
                raise self.fail(f"expected a `- item` line, found {item[:60]!r}")
            raw = item[1:].strip()
            if raw and raw[0] in "\"'":
                values.append(_quoted(raw, self)[0])
            elif raw not in _NULLS:
                values.append(_plain(raw, self))
        return [value.strip() for value in values]


def _unquote_key(key: str) -> str:
    if key[:1] == '"':
        return _double(key[1:-1])
    if key[:1] == "'":
        return key[1:-1].replace("''", "'")
    return key


def _double(body: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\":
            out.append(char)
            index += 1
            continue
        code = body[index + 1:index + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            index += 2
        elif code in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[code]
            digits = body[index + 2:index + 2 + width]
            if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise FrontMatterError(f"invalid YAML: bad escape \\{code}{digits}")
            out.append(chr(int(digits, 16)))
            index += 2 + width
        else:
            raise FrontMatterError(f"invalid YAML: unknown escape \\{code}")
    return "".join(out)


def _quoted(raw: str, parser: _Parser) -> tuple[str, str]:
    """(the text of the quoted scalar at the start of `raw`, what follows it)."""
    quote = raw[0]
    index = 1
    while index < len(raw):
        if quote == "'" and raw[index] == "'":
            if raw[index + 1:index + 2] == "'":
                index += 2
                continue
            return raw[1:index].replace("''", "'").strip(), raw[index + 1:].strip()
        if quote == '"' and raw[index] == "\\":
            index += 2
            continue
        if quote == '"' and raw[index] == '"':
            return _double(raw[1:index]).strip(), raw[index + 1:].strip()
        index += 1
    raise parser.fail("unterminated quoted value")


def _plain(raw: str, parser: _Parser) -> str:
    comment = re.search(r"\s#", raw)
    if comment:
        raw = raw[:comment.start()]
    raw = raw.strip()
    if raw[:1] in ("*", "&", "!", "@", "`", "%"):
        if raw[:1] == "*":
            raise parser.fail(f"unidentified alias {raw.split()[0]!r}")
        if raw[:1] in ("@", "`"):
            raise parser.fail(f"a plain value cannot start with {raw[0]!r}")
        if raw[:1] == "!":
            raw = raw.split(None, 1)[1] if " " in raw else ""
    if re.search(r":(\s|$)", raw):
        raise parser.fail("nested mappings are not allowed in a plain value (quote it)")
    return "" if raw in _NULLS else raw


def _fold(lines: list[str], parser: _Parser) -> str:
    return _plain(" ".join(line for line in lines if line), parser)


def _flow_sequence(raw: str, parser: _Parser) -> list[str]:
    end = raw.rfind("]")
    if end < 0:
        raise parser.fail("unterminated flow sequence")
    rest = raw[end + 1:].strip()
    if rest and not rest.startswith("#"):
        raise parser.fail(f"unexpected text after a flow sequence: {rest[:40]!r}")
    body, values = raw[1:end].strip(), []
    while body:
        if body[0] in "\"'":
            text, body = _quoted(body, parser)
            values.append(text)
            if body and not body.startswith(","):
                raise parser.fail("missing comma in a flow sequence")
            body = body[1:].strip()
            continue
        item, _, body = body.partition(",")
        if item.strip() not in _NULLS:
            if item.strip()[:1] in "[{":
                raise parser.fail("nested collections are not read in `tools`-like fields")
            values.append(_plain(item, parser))
        body = body.strip()
    return values


def _block_scalar(header: str, block: list[str], parser: _Parser) -> str:
    style, indicators = header[0], header[1:].split("#", 1)[0].strip()
    if indicators and not re.fullmatch(r"[+-]?[1-9]?|[1-9][+-]", indicators):
        raise parser.fail(f"bad block scalar header {header!r}")
    chomp = "+" if "+" in indicators else "-" if "-" in indicators else ""
    widths = [_indent(line) for line in block if line.strip()]
    width = min(widths) if widths else 0
    lines = [line[width:] if line.strip() else "" for line in block]
    if style == "|":
        text = "\n".join(lines)
    else:
        text, previous_blank = "", True
        for line in lines:
            if not line:
                text += "\n"
                previous_blank = True
            elif line.startswith(" "):
                text += ("" if previous_blank else "\n") + line + "\n"
                previous_blank = True
            else:
                text += ("" if previous_blank else " ") + line
                previous_blank = False
        text = text.rstrip("\n")
    return text if chomp == "-" else text + "\n" if text else text
