"""Terminal side effects the shell offers its commands: questions asked on their own prompt, the
tab title (OSC 2) and file hyperlinks (OSC 8 where the terminal shows them). The clipboard is
`present/clipboard.py`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..present.console import printable

_NO_HYPERLINKS = ("dumb", "linux", "")


class NoEcho:
    """The terminal's own echo off while the shell runs (restored on leaving): between two prompts
    — a turn's end, a slash command running — keys the user types are not echoed raw by the tty
    (garbling the screen) but wait, unseen, for the next prompt, which reads and shows them.
    Every question is a prompt_toolkit prompt, which draws what it reads itself."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.saved: list[Any] | None = None

    def __enter__(self) -> NoEcho:
        import termios

        try:
            attributes = termios.tcgetattr(self.fd)
        except (termios.error, OSError):
            return self  # not a terminal: nothing to do
        self.saved = list(attributes)
        attributes[3] &= ~termios.ECHO
        termios.tcsetattr(self.fd, termios.TCSANOW, attributes)
        return self

    def __exit__(self, *exc: object) -> None:
        import termios

        if self.saved is not None:
            try:
                termios.tcsetattr(self.fd, termios.TCSANOW, self.saved)
            except (termios.error, OSError):
                pass


def _ask(question: str, default: str = "") -> str | None:
    from prompt_toolkit import PromptSession

    try:
        return PromptSession[str]().prompt(f"{question} ", default=default)
    except (KeyboardInterrupt, EOFError):
        return None


def confirm(question: str, *, default: bool = False) -> bool:
    """Yes or no (Enter takes the default; Ctrl+C or Ctrl+D is no)."""
    answer = _ask(f"{printable(question, one_line=True)} [{'Y/n' if default else 'y/N'}]")
    if answer is None:
        return False
    answer = answer.strip().lower()
    return default if not answer else answer in ("y", "yes")


def choose(question: str, options: Sequence[str], *, default: int = 0) -> int | None:
    """One of `options`, answered by one key without Enter: its number, `y`/`n` where the first
    option is a yes and the last a no, Enter for the default; Esc, Ctrl+C or Ctrl+D cancel (None)."""
    from .render import wrap_words

    sys.stdout.write("".join(f"{row}\n" for row in wrap_words(printable(question, one_line=True))))
    for number, option in enumerate(options, start=1):
        sys.stdout.write("".join(f"{row}\n" for row in wrap_words(f"  {number}. {printable(option, one_line=True)}")))
    sys.stdout.flush()
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    bindings = KeyBindings()
    bindings.add("<any>")(lambda event: None)  # other keys do nothing (first: a later binding wins)

    def answer(result: int | None) -> Callable[[KeyPressEvent], None]:
        return lambda event: event.app.exit(result=result)

    for number in range(1, min(len(options), 9) + 1):
        bindings.add(str(number))(answer(number - 1))
    if options and options[0].lower().startswith("yes") and options[-1].lower().startswith("no"):
        bindings.add("y")(answer(0))
        bindings.add("n")(answer(len(options) - 1))
    bindings.add("enter")(answer(default))
    for cancel in ("escape", "c-c", "c-d"):
        bindings.add(cancel, eager=True)(answer(None))
    hint = f"[1-{min(len(options), 9)}, Enter for {default + 1}, Esc cancels]"
    picked: int | None = PromptSession[int | None]().prompt(f"choice {hint}: ", key_bindings=bindings)
    return picked


def ask_text(question: str, *, default: str = "") -> str | None:
    return _ask(printable(question, one_line=True), default)


def _osc(body: str) -> None:
    stream = sys.__stdout__ or sys.stdout
    stream.write(f"\x1b]{body}\x07")
    stream.flush()


def set_title(title: str) -> None:
    """Sets the terminal tab title (OSC 2); control characters are dropped first."""
    clean = "".join(character for character in title if character.isprintable())[:200]
    _osc(f"2;{clean}")


def hyperlinks_supported() -> bool:
    """Whether the terminal is one that shows OSC 8 links (not dumb, not the Linux console)."""
    return sys.stdout.isatty() and os.environ.get("TERM", "") not in _NO_HYPERLINKS


def file_link(path: str) -> str:
    """`path` as an OSC 8 hyperlink to `file://host/path` where supported, else as printable text."""
    import socket
    from urllib.parse import quote

    shown = printable(path, one_line=True)
    if not hyperlinks_supported():
        return shown
    url = f"file://{socket.gethostname()}{quote(path)}"
    return f"\x1b]8;;{url}\x1b\\{shown}\x1b]8;;\x1b\\"
