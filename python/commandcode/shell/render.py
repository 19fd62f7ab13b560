"""What the shell prints: replies rendered with rich, one line per tool call, notices, errors;
and the live region's state while a turn runs.

Scrollback output goes through `Output`, which renders with rich into ANSI text and writes it
to `sys.stdout` — while the prompt is up that is prompt_toolkit's stdout proxy, which prints
above the prompt, so only the live region (the running tool, queued messages, the prompt and
the status line) is ever redrawn, never the whole screen. `LiveTurn` turns a turn's events
(`agent/events.py`) into that output: reply text is rendered as it streams in, block by block —
each markdown block (a paragraph, a list, a fenced code block…) is printed, rendered, once a blank
line outside a code fence closes it, and the block still being written shows in the live region
as plain text; the rest is printed when the model call ends (its `usage` event, a tool call, or
the end of the turn). Each tool call becomes one collapsed line
(tool, main argument, outcome) that `/expand N` or Ctrl+O shows whole. Lines written without
rich (notices, the resume recap, questions) are wrapped at words too (`wrap_words`): the terminal
would cut them mid-word.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..agent.events import NOTICE, OUTPUT, PROGRESS, TEXT, TOOL_END, TOOL_START, USAGE, TurnEvent
from ..present.console import printable

MAX_ARGUMENT_CHARS = 60
LIVE_TEXT_LINES = 8  # how much of a streaming reply the live region shows
_MAIN_ARGUMENTS = ("file_path", "path", "command", "pattern", "url", "query")


class ToolCall:
    """One tool call of this shell's turns, kept for `/expand`."""

    __slots__ = ("done", "input", "is_error", "name", "text")

    def __init__(self, name: str, tool_input: dict[str, Any]) -> None:
        self.name, self.input = name, tool_input
        self.text, self.is_error, self.done = "", False, False


def one_line(text: str, limit: int) -> str:
    """`text` on one line (controls escaped), cut to `limit` characters with an ellipsis."""
    flat = printable(" ".join(str(text).split()), one_line=True)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def main_argument(tool_input: dict[str, Any]) -> str:
    """The argument that says what a call does: its file, command, pattern…; else the first string."""
    for key in _MAIN_ARGUMENTS:
        if isinstance(tool_input.get(key), str):
            return one_line(tool_input[key], MAX_ARGUMENT_CHARS)
    first = next((value for value in tool_input.values() if isinstance(value, str)), "")
    return one_line(first, MAX_ARGUMENT_CHARS)


def outcome(call: ToolCall) -> str:
    """A tool's result in a few words: the error's first line, else its size or first line."""
    lines = call.text.splitlines()
    if call.is_error:
        return "failed: " + one_line(lines[0] if lines else "error", MAX_ARGUMENT_CHARS)
    if len(lines) > 1:
        return f"{len(lines)} lines"
    return one_line(lines[0], MAX_ARGUMENT_CHARS) if lines else "done"


def tool_line(number: int, call: ToolCall, width: int | None = None) -> str:
    """The collapsed line of a finished tool call, cut (keeping its `#N`) to fit `width` cells so
    the terminal never wraps it."""
    mark = "✗" if call.is_error else "●"
    body = f"{mark} {one_line(call.name, 40)}({main_argument(call.input)}) → {outcome(call)}"
    suffix = f"  #{number}"
    if width is not None:
        body = fit_cells(body, max(8, width - 1 - len(suffix)))
    return body + suffix


def fit_cells(text: str, cells: int) -> str:
    """`text` cut to at most `cells` terminal cells (wide characters count two), with an ellipsis."""
    from rich.cells import cell_len

    if cell_len(text) <= cells:
        return text
    kept, used = [], 0
    for character in text:
        size = cell_len(character)
        if used + size > cells - 1:
            break
        kept.append(character)
        used += size
    return "".join(kept) + "…"


def split_finished_blocks(text: str) -> tuple[str, str]:
    """`text` cut after its last finished markdown block: (the finished blocks, the rest).

    A block is finished by a blank line outside a fenced code block (a fence opens and closes
    with a line of three or more backticks or tildes), so a code block is never split."""
    fence = ""
    cut = 0
    position = 0
    seen_content = False
    for line in text.splitlines(keepends=True):
        position += len(line)
        if not line.endswith("\n"):
            break  # the line still being written
        stripped = line.strip()
        marker = stripped[:3]
        if fence:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
        elif marker in ("```", "~~~"):
            fence = stripped[: len(stripped) - len(stripped.lstrip(marker[0]))]
        elif not stripped and seen_content:
            cut = position
            seen_content = False
            continue
        seen_content = seen_content or bool(stripped)
    return text[:cut], text[cut:]


def terminal_width() -> int:
    return max(20, shutil.get_terminal_size((100, 24)).columns)


def wrap_words(line: str, width: int | None = None) -> list[str]:
    """`line` as rows of at most `width` columns (the terminal's), broken at spaces as rich
    breaks a reply; only a word longer than a row is cut. A line the terminal would wrap itself
    was cut mid-word (`repos` / `itory`). Continuation rows keep the line's indent."""
    width = width or terminal_width()
    if len(line) <= width:
        return [line]
    import textwrap

    indent = line[: len(line) - len(line.lstrip(" "))]
    if len(indent) >= width // 2:
        indent = ""
    return textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False) or [line]


class Output:
    """Writes rendered text to the terminal (above the prompt while it is up). While a question
    is up (`held`), what other threads write waits and follows it, so it never lands in the
    question (a background run asks while the turn still prints)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: list[str] | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            self._held = []
        try:
            yield
        finally:
            with self._lock:
                waiting, self._held = self._held or [], None
                if waiting:
                    sys.stdout.write("".join(waiting))
                    sys.stdout.flush()

    def _render(self, *renderables: Any, markup: bool = False) -> str:
        from rich.console import Console

        buffer = io.StringIO()
        console = Console(file=buffer, force_terminal=not os.environ.get("NO_COLOR"), width=terminal_width(),
                          highlight=False, soft_wrap=False, emoji=False)
        for renderable in renderables:
            console.print(renderable, markup=markup)
        return buffer.getvalue()

    def write(self, text: str) -> None:
        with self._lock:
            if self._held is not None:
                self._held.append(text)
                return
            sys.stdout.write(text)
            sys.stdout.flush()

    def plain(self, text: str) -> None:
        from rich.text import Text

        self.write(self._render(Text(printable(text))))

    def markup(self, text: str) -> None:
        """Prints rich markup whose variable parts the caller escaped (`present.console.safe`)."""
        self.write(self._render(text, markup=True))

    def markdown(self, text: str) -> None:
        from rich.markdown import Markdown

        self.write(self._render(Markdown(printable(text), code_theme="monokai", hyperlinks=False)))

    def notice(self, text: str) -> None:
        """A dimmed line, wrapped at words; written without rich (a resume's first notice must
        not pay its import)."""
        plain = bool(os.environ.get("NO_COLOR"))
        self.write("".join(f"{row}\n" if plain else f"\x1b[2m{row}\x1b[0m\n"
                           for row in wrap_words(printable(text, one_line=True))))

    def recap(self, lines: list[tuple[str, str]]) -> None:
        """The recent conversation (`recap.recap_lines`): prompts bold, replies plain, tool counts
        dimmed; written without rich, like `notice` (it comes with a resume's first notice)."""
        plain = bool(os.environ.get("NO_COLOR"))
        styles = {"prompt": "\x1b[1m", "tools": "\x1b[2m"}
        out = []
        for kind, text in lines:
            style = "" if plain else styles.get(kind, "")
            for row in wrap_words(printable(text, one_line=True)):
                out.append(f"{style}{row}\x1b[0m\n" if style else f"{row}\n")
        self.write("".join(out))

    def diff(self, lines: list[str]) -> None:
        """A unified diff, additions green and removals red (without rich, as `notice`)."""
        plain = bool(os.environ.get("NO_COLOR"))
        colours = {"+": "\x1b[32m", "-": "\x1b[31m", "@": "\x1b[36m"}
        out = []
        for text in lines:
            line = printable(text, one_line=True)
            colour = "" if plain or text.startswith(("+++", "---")) else colours.get(text[:1], "")
            out.append(f"{colour}{line}\x1b[0m\n" if colour else f"{line}\n")
        self.write("".join(out))

    def tool(self, line: str, *, failed: bool) -> None:
        """A collapsed tool line (already one printable line)."""
        from rich.text import Text

        self.write(self._render(Text(line, style="red" if failed else "cyan")))

    def error(self, message: str, hint: str | None = None) -> None:
        from rich.text import Text

        lines = [Text.assemble(("error", "bold red"), f": {printable(message, one_line=True)}")]
        if hint:
            lines.append(Text.assemble(("hint", "bold cyan"), f": {printable(hint, one_line=True)}"))
        self.write(self._render(*lines))

    def expanded(self, number: int, call: ToolCall) -> None:
        """A tool call shown whole: its input and its full result."""
        from rich.markup import escape

        from ..storage.jsonfmt import dumps_display

        self.markup(f"[bold]#{number} {escape(call.name)}[/] " + ("[red](failed)[/]" if call.is_error else ""))
        self.plain(dumps_display(call.input, pretty=True))
        self.plain(call.text or "(no output)")


class LiveTurn:
    """A running turn as the live region shows it, fed by its events from the turn's thread."""

    def __init__(self, output: Output, calls: list[ToolCall], redraw: Any) -> None:
        self.output = output
        self.calls = calls  # every tool call of the shell (numbered from 1), for /expand
        self.redraw = redraw
        self.running: ToolCall | None = None
        self.progress = ""  # what the running tool does now (a foreground sub-agent's tool call)
        self.partial = ""  # reply text of the current model call, not printed yet
        self.shown: dict[str, str] = {}  # `output` to print under a call when it ends, by tool_use id
        self._lock = threading.Lock()

    def flush(self) -> None:
        """Prints the gathered reply text as markdown (a model call ended, or the turn did)."""
        with self._lock:
            text, self.partial = self.partial, ""
        if text.strip():
            self.output.markdown(text)

    def on_event(self, event: TurnEvent) -> None:
        """Prints a finished piece above the prompt; keeps the running tool for the live region."""
        if event.kind == TEXT:
            with self._lock:
                finished, self.partial = split_finished_blocks(self.partial + event.text)
            if finished.strip():
                self.output.markdown(finished)
        elif event.kind == USAGE:
            self.flush()
        elif event.kind == TOOL_START:
            self.flush()
            with self._lock:
                self.running, self.progress = ToolCall(event.name or "?", event.input), ""
                self.calls.append(self.running)
        elif event.kind == PROGRESS:
            with self._lock:
                self.progress = event.text
        elif event.kind == OUTPUT:
            with self._lock:
                self.shown[event.tool_use_id] = event.text
        elif event.kind == TOOL_END:
            with self._lock:
                call = self.running if self.running is not None else ToolCall(event.name or "?", event.input)
                call.text, call.is_error, call.done = event.outcome, event.is_error, True
                self.running, self.progress = None, ""
                number = self.calls.index(call) + 1 if call in self.calls else len(self.calls)
                shown = self.shown.pop(event.tool_use_id, None)
            self.output.tool(tool_line(number, call, terminal_width()), failed=call.is_error)
            if shown:
                self.output.markdown(shown)
        elif event.kind == NOTICE:
            self.output.notice(event.text)
        self.redraw()

    def live_lines(self) -> list[str]:
        """What the live region shows of the turn: the newest lines of a streaming reply, the
        running tool (empty when neither)."""
        with self._lock:
            call, partial, progress = self.running, self.partial, self.progress
        lines = [printable(line) for line in partial.splitlines()[-LIVE_TEXT_LINES:]]
        if call is not None:
            now = f" · {printable(progress)}" if progress else ""
            lines.append(f"⋯ {call.name}({main_argument(call.input)}) running{now} — Esc interrupts")
        return lines
