"""Driving `commandcode` in a real pseudo-terminal: pexpect spawns it, pyte rebuilds the screen.

`ShellSession(cwd, data)` starts `python -m commandcode ARGS` in a pty of `columns` × `rows`
with the test's data dir (`cli_env`). The screen is read through pyte (dependencies.md trap 2:
the prompt is drawn with cursor moves, so raw output is no text to match), and pyte answers
prompt_toolkit's cursor-position requests as a real terminal does: with `PROMPT_TOOLKIT_NO_CPR=1`
(trap 1's way around a terminal that never answers) prompt_toolkit never learns the screen's
height and leaves the bottom toolbar, our status line, out. `wait_screen(text, *more)` polls until
one screen shows `text` and every one of `more` (timeouts only detect hangs): a frame arrives in
pieces, so a check of a screen waited for on one text alone can see the frame half drawn;
`wait_words(*texts)` does the same for messages the terminal wraps, `wait_until(check)` for a
pattern.
`send(keys)` types, `line(text)` types and presses Enter. `raw` keeps every byte the program
wrote, for escape sequences pyte drops (OSC 2/8/52).

`TmuxSession` does the same through tmux (`capture-pane`), for tests that need a real terminal
multiplexer in between. Every tmux client a test starts gets `tmux_env()`: the test process's
environment without `COLUMNS` and `LINES`. Under pytest, GNU readline (which pytest imports) has
exported `COLUMNS=80 LINES=24` into the C environment (not into `os.environ`); a tmux client
started with the inherited environment hands them to the server's global environment, every
program in a pane inherits them, and `shutil.get_terminal_size()` (Textual's and the shell's
size) prefers them to the pane's real size: every full-screen check ran at 80x24 whatever
`-x`/`-y` said, and an 80x20 window was drawn 24 rows high.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import cli_env

ESC, ENTER, TAB, CTRL_C, CTRL_D, CTRL_R, CTRL_O, SHIFT_TAB, ALT_ENTER = (
    "\x1b", "\r", "\t", "\x03", "\x04", "\x12", "\x0f", "\x1b[Z", "\x1b\r")
HANG_TIMEOUT = 60.0
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")


class ShellSession:
    """One `commandcode` process in a pty, its screen kept by pyte."""

    def __init__(self, cwd: Path, data: Path, args: list[str] | None = None, *, columns: int = 120, rows: int = 40,
                 **extra_env: str) -> None:
        import pexpect
        import pyte

        env = cli_env(data, TERM="xterm-256color", **extra_env)
        child: list[Any] = []

        class AnsweringScreen(pyte.Screen):  # type: ignore[misc]
            def write_process_input(self, data: str) -> None:  # pyte's reply to a cursor-position request
                child[0].send(data)

        self.screen = AnsweringScreen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""
        self.child = pexpect.spawn(sys.executable, ["-m", "commandcode", *(args or [])], cwd=str(cwd), env=env,
                                   dimensions=(rows, columns))
        child.append(self.child)

    def pump(self, seconds: float = 0.05) -> None:
        """Reads what the program wrote in the next `seconds` into the screen."""
        import pexpect

        deadline = time.monotonic() + seconds
        while True:
            try:
                chunk = self.child.read_nonblocking(65536, timeout=max(0.0, deadline - time.monotonic()))
            except pexpect.TIMEOUT:
                break
            except pexpect.EOF:
                break
            self.raw += chunk
            self.stream.feed(chunk)
            if time.monotonic() >= deadline:
                break

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_screen(self, text: str, *more: str, timeout: float = HANG_TIMEOUT) -> str:
        """Waits until the screen shows `text` (and each of `more`, all in one frame: a frame
        arrives in pieces, and a later check of the screen needs all of it); returns the screen."""
        texts = (text, *more)
        deadline = time.monotonic() + timeout
        while not _shows(screen := self.text(), texts):
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {texts!r} at once; it shows:\n{screen}")
            if not self.child.isalive():
                self.pump(0.1)
                if _shows(screen := self.text(), texts):
                    break
                raise AssertionError(f"commandcode exited before showing {texts!r}:\n{screen}")
            self.pump()
        return screen

    def wait_until(self, check: Callable[[str], object], what: str, *, timeout: float = HANG_TIMEOUT) -> str:
        """Waits until `check(screen)` holds (for what `wait_screen`'s plain texts cannot say: a
        pattern, a part after a marker); returns the screen."""
        deadline = time.monotonic() + timeout
        while not check(screen := self.text()):
            if time.monotonic() > deadline or not self.child.isalive():
                self.pump(0.1)
                if check(screen := self.text()):
                    break
                raise AssertionError(f"the screen never showed {what}; it shows:\n{screen}")
            self.pump()
        return screen

    def wait_words(self, *texts: str, timeout: float = HANG_TIMEOUT) -> str:
        """Waits until the screen's words, joined by single spaces (the terminal wraps a long line
        anywhere), hold every one of `texts`, whole: a message waited for by its start alone may
        be on the screen only in part. Returns the joined words."""
        self.wait_until(lambda screen: _shows(" ".join(screen.split()), texts), f"{texts!r}", timeout=timeout)
        return " ".join(self.text().split())

    def wait_output(self, *texts: str, timeout: float = HANG_TIMEOUT) -> None:
        """Waits until the program's output (`raw`), its line breaks taken out, holds every one of
        `texts`: for what is printed once, before the first prompt, where the screen can lose it
        (on a loaded machine prompt_toolkit's first cursor-position request can go unanswered for
        its 2 s, and its fallback drawing scrolled the start-up lines off the screen)."""
        wanted = [text.encode() for text in texts]
        deadline = time.monotonic() + timeout
        while not all(text in self.raw.replace(b"\r", b"").replace(b"\n", b"") for text in wanted):
            if time.monotonic() > deadline:
                raise AssertionError(f"the output never held {texts!r}; the screen:\n{self.text()}")
            self.pump()

    def wait_raw(self, data: bytes, *, timeout: float = HANG_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while data not in self.raw:
            if time.monotonic() > deadline:
                raise AssertionError(f"the output never held {data!r}")
            self.pump()

    def wait_count(self, text: str, count: int, *, timeout: float = HANG_TIMEOUT) -> None:
        """Waits until the program has written `text` `count` times (in its raw output: a line
        that already scrolled by still counts), so a repeated answer is not mistaken for the last one."""
        deadline = time.monotonic() + timeout
        while self.raw.count(text.encode()) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"the output held {text!r} {self.raw.count(text.encode())} times, never {count}")
            self.pump()

    def wait_prompt(self) -> str:
        """Waits for the prompt: a line starting with `>` above the status line."""
        deadline = time.monotonic() + HANG_TIMEOUT
        while True:
            screen = self.wait_screen("checkpoint(s)")
            if any(line.startswith(">") for line in screen.splitlines()):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"no prompt on the screen:\n{screen}")
            self.pump()

    def interrupt_once(self, started: Path) -> str:
        """Presses Esc once a running command has made the file `started`, then waits for the
        notice of the interrupted turn; returns the screen."""
        deadline = time.monotonic() + HANG_TIMEOUT
        while not started.exists():
            assert time.monotonic() < deadline, self.text()
            self.pump(0.1)
        self.send(ESC)
        return self.wait_screen("Interrupted · what was said so far is kept")

    def send(self, keys: str) -> None:
        self.child.send(keys)
        self.pump(0.1)

    def line(self, text: str) -> None:
        """Types `text` and presses Enter."""
        self.child.send(text)
        self.pump(0.1)
        self.child.send(ENTER)
        self.pump(0.1)

    def exchange(self, text: str, shows: str, *more: str) -> str:
        """Sends the line `text` and waits until the screen `shows` the answer (and each of `more`,
        as `wait_screen`); returns the screen."""
        self.line(text)
        return self.wait_screen(shows, *more)

    def wait_exit(self, *, timeout: float = HANG_TIMEOUT) -> int:
        deadline = time.monotonic() + timeout
        while self.child.isalive():
            if time.monotonic() > deadline:
                raise AssertionError(f"commandcode did not exit; the screen:\n{self.text()}")
            self.pump()
        self.pump(0.1)
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


def shell_session(cwd: Path, data: Path, args: list[str] | None = None, **options: Any) -> ShellSession:
    """A started `ShellSession` whose first prompt is up."""
    session = ShellSession(cwd, data, args, **options)
    try:
        session.wait_prompt()
    except BaseException:
        session.close()
        raise
    return session


def tmux_env(**extra: str) -> dict[str, str]:
    """The environment of a tmux client (see the module doc: no inherited `COLUMNS`/`LINES`)."""
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    env.update({"TERM": "xterm-256color", **extra})
    return env


def tmux(socket: str | Path, *args: str) -> str:
    """Runs one tmux command on the test's private server (`socket`); returns its output."""
    return subprocess.run(["tmux", "-S", str(socket), *args], capture_output=True, text=True, timeout=30,
                          check=True, env=tmux_env()).stdout


class TmuxSession:
    """`commandcode` in a detached tmux session of its own (socket private to the test)."""

    def __init__(self, cwd: Path, data: Path, socket: Path, args: list[str] | None = None, *, columns: int = 120,
                 rows: int = 40) -> None:
        self.socket = str(socket)
        env = cli_env(data, PROMPT_TOOLKIT_NO_CPR="1")
        exports = " ".join(f"{key}={_quote(value)}" for key, value in env.items()
                           if key.startswith(("COMMANDCODE_", "NO_COLOR", "PYTHON", "GIT_")) or key in ("HOME", "PATH"))
        command = f"cd {_quote(str(cwd))} && env {exports} {_quote(sys.executable)} -m commandcode {' '.join(map(_quote, args or []))}"
        self.tmux("new-session", "-d", "-s", "cc", "-x", str(columns), "-y", str(rows), command)
        self.tmux("set-option", "-t", "cc", "remain-on-exit", "on")

    def tmux(self, *args: str) -> str:
        return tmux(self.socket, *args)

    def size(self) -> tuple[int, int]:
        """The pane's columns and rows, as tmux has them."""
        columns, rows = self.tmux("display-message", "-p", "-t", "cc", "#{pane_width} #{pane_height}").split()
        return int(columns), int(rows)

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "cc")

    def wait_screen(self, text: str, *more: str, timeout: float = HANG_TIMEOUT) -> str:
        """As `ShellSession.wait_screen`: until the pane shows `text` and each of `more` at once."""
        texts = (text, *more)
        deadline = time.monotonic() + timeout
        while not _shows(screen := self.text(), texts):
            if time.monotonic() > deadline:
                raise AssertionError(f"tmux never showed {texts!r} at once; it shows:\n{screen}")
            time.sleep(0.05)
        return screen

    def wait_until(self, check: Callable[[str], object], what: str, *, timeout: float = HANG_TIMEOUT) -> str:
        """As `ShellSession.wait_until`: until `check(pane)` holds; returns the pane."""
        deadline = time.monotonic() + timeout
        while not check(screen := self.text()):
            if time.monotonic() > deadline:
                raise AssertionError(f"tmux never showed {what}; it shows:\n{screen}")
            time.sleep(0.05)
        return screen

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "cc", *keys)

    def line(self, text: str) -> None:
        self.tmux("send-keys", "-t", "cc", "-l", text)
        self.keys("Enter")

    def dead(self) -> bool:
        return self.tmux("display-message", "-p", "-t", "cc", "#{pane_dead}").strip() == "1"

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=30)


def _shows(screen: str, texts: tuple[str, ...]) -> bool:
    return all(text in screen for text in texts)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)
