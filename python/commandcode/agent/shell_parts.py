"""A shell command line cut into its simple commands, for permission rules: `a && b; c | d` is
four parts, each judged (and, on "don't ask again", saved) on its own.

The cut happens at `&&`, `||`, `;`, `|`, `&` and newlines outside quotes, backslash escapes and
`$(...)`/backticks; each part's text is kept as written (trimmed). A part that is itself a
subshell or substitution stays whole, so `echo $(rm -rf x)` is one part and never matches a rule
for `echo` alone: `has_substitution` lets the caller ask for such parts every time.
"""

from __future__ import annotations

_OPERATORS = ("&&", "||", ";", "|", "&", "\n")


def split_command(command: str) -> list[str]:
    """The simple commands of `command`, in order (empty parts dropped)."""
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    depth = 0
    index = 0
    while index < len(command):
        char = command[index]
        if quote is not None:
            current.append(char)
            if char == "\\" and quote == '"' and index + 1 < len(command):
                current.append(command[index + 1])
                index += 1
            elif char == quote:
                quote = None
            index += 1
            continue
        if char == "\\" and index + 1 < len(command):
            current.append(command[index:index + 2])
            index += 2
            continue
        if char in "'\"`":
            quote = char
        elif command.startswith("$(", index):
            depth += 1
            current.append("$(")
            index += 2
            continue
        elif char == ")" and depth:
            depth -= 1
        elif depth == 0:
            operator = next((op for op in _OPERATORS if command.startswith(op, index)), None)
            if operator is not None and not _is_redirect(command, index, operator):
                parts.append("".join(current))
                current = []
                index += len(operator)
                continue
        current.append(char)
        index += 1
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def _is_redirect(command: str, index: int, operator: str) -> bool:
    """`2>&1`, `>&2`, `&>file` and `|&`'s `&` are redirections, not separators."""
    if operator != "&":
        return False
    before = command[index - 1] if index else ""
    after = command[index + 1] if index + 1 < len(command) else ""
    return before in "<>" or after == ">"


def has_substitution(part: str) -> bool:
    """Whether a part runs a command substitution (`$(...)` or backticks) outside single quotes."""
    quote: str | None = None
    for index, char in enumerate(part):
        if quote == "'":
            if char == "'":
                quote = None
            continue
        if char == "'" and quote is None:
            quote = "'"
        elif char == '"':
            quote = None if quote == '"' else '"'
        elif char == "`" or part.startswith("$(", index):
            return True
    return False
