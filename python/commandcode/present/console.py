"""Console output for every front end: data to stdout, messages to stderr, one error line (+ hint).

Colour follows rich's rules (off when not a terminal or when `NO_COLOR` is set). Text that comes
from files (names, prompts, paths, ids) goes through `printable` before it reaches a terminal: a
hostile transcript must not drive it with escape sequences, nor split a one-line message.
"""

from __future__ import annotations

import functools
import os
import sys

from ..errors import CommandcodeError
from ..storage.jsonfmt import dumps_display

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from rich.console import Console

    F = TypeVar("F", bound=Callable[..., Any])


class _LazyConsole:
    """A rich `Console` made on first use: `--json` output and errors-free runs never import rich
    (it costs more than a warm open of a huge session)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return getattr(self._console, name)


stdout: Console = _LazyConsole(soft_wrap=True, highlight=False)  # type: ignore[assignment]
stderr: Console = _LazyConsole(stderr=True, soft_wrap=True, highlight=False)  # type: ignore[assignment]

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and isolates.
_UNPRINTABLE = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
_UNPRINTABLE_ONE_LINE = "[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]"


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` safe to print: control characters are shown as escapes (`\\x1b`), never sent raw;
    lone surrogates (undecodable file names) as `\\udcff`. `one_line` also escapes line breaks."""
    import re  # compiled once and cached by `re`; not loaded by runs that print no text

    pattern = re.compile(_UNPRINTABLE_ONE_LINE if one_line else _UNPRINTABLE)
    if pattern.search(text):
        text = pattern.sub(lambda match: f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100
                           else f"\\u{ord(match.group()):04x}", text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def safe(text: object, *, one_line: bool = False) -> str:
    """`printable` text with rich markup escaped, for `Console.print` and table cells."""
    from rich.markup import escape

    return escape(printable(str(text), one_line=one_line))


def plain_stream(stream: Any) -> bool:
    """Whether rich would write to `stream` as plain text, with no colour or style (rich's own
    test, `Console.is_terminal`: `TTY_COMPATIBLE`, then `FORCE_COLOR`, then `isatty`), so a line
    can go out without loading rich: a headless run's reply and warnings, piped, never need it."""
    if stream is None:
        return False
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "0"
    forced = os.environ.get("FORCE_COLOR")
    if forced is not None:
        return forced == ""
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed file: no terminal
        return True


def write_out(text: str) -> None:
    """Writes `text` (already `printable`) and a newline to stdout: as it is when stdout is no
    terminal (tabs kept: a reply piped to a file is the reply), else through rich's `out`."""
    if plain_stream(sys.stdout):
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    else:
        stdout.out(text, highlight=False)


def print_lines(*lines: str) -> None:
    """Writes each line to stdout as plain, `printable` text: what a short answer needs, without
    loading rich (a tenth of a fast command's time)."""
    sys.stdout.write("".join(printable(line, one_line=True) + "\n" for line in lines))
    sys.stdout.flush()


def print_json(value: Any) -> None:
    """Writes `value` as pretty JSON to stdout (plain text, no markup)."""
    sys.stdout.write(dumps_display(value, pretty=True) + "\n")
    sys.stdout.flush()


def print_json_line(value: Any) -> None:
    """Writes `value` as one compact JSON line to stdout."""
    sys.stdout.write(dumps_display(value, pretty=False) + "\n")
    sys.stdout.flush()


USAGE_EXIT_CODE = 2  # a usage error (bad options or arguments); a refused or failed operation is 1


def fail(message: str, hint: str | None = None, *, code: int = 1) -> SystemExit:
    """Prints `error: message` (and `hint: …`) to stderr; returns the exit (`code`) to raise.

    A plain `SystemExit`, not typer's: the fast path runs commands without importing typer, and
    under typer a `SystemExit` from a command passes through to `main()` unchanged."""
    stderr.print(f"[bold red]error[/]: {printable(message, one_line=True)}", markup=True, highlight=False)
    if hint:
        stderr.print(f"[bold cyan]hint[/]: {printable(hint, one_line=True)}", markup=True, highlight=False)
    return SystemExit(code)


def warn(message: str) -> None:
    """Prints `warning: message` (plain text, not markup) to stderr, on one line."""
    if plain_stream(sys.stderr):  # what rich would print, without loading it
        sys.stderr.write(f"warning: {printable(message, one_line=True)}\n")
        sys.stderr.flush()
        return
    stderr.print(f"[bold yellow]warning[/]: {safe(message, one_line=True)}", markup=True, highlight=False)


def handle_errors(function: F) -> F:
    """Turns `CommandcodeError` (and I/O errors on user files) into one stderr line and exit 1
    (exit 2 for a `UsageError`)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except CommandcodeError as error:
            from ..errors import UsageError

            code = USAGE_EXIT_CODE if isinstance(error, UsageError) else 1
            raise fail(_escape(str(error)), _escape(error.hint) if error.hint else None, code=code) from None
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            hint = _refused_hint(error)
            raise fail(_escape(f"{where}{error.strerror or error}"), _escape(hint) if hint else None) from None

    return wrapper  # type: ignore[return-value]


def _refused_hint(error: OSError) -> str | None:
    """What to do about a path the system refused (no permission, a read-only file system): a
    data dir that cannot be written is named with the way to use another; None for other errors."""
    import errno

    if error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
        return None
    from ..config.paths import data_root

    root = data_root()
    if error.filename and os.fspath(error.filename).startswith(os.path.join(root, "")):
        return f"commandcode's data dir {root} cannot be written: make it writable, or set `COMMANDCODE_HOME` to another"
    if error.errno == errno.EROFS:
        return "that file system is read-only: name a path on another one"
    return "check the permissions of that path and of its folder"


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
