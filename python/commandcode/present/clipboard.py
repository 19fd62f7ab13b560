"""The clipboard: how `Shell.copy` (and so `/copy`, `/share`) puts text on it.

In order, every way that applies is tried, and the line returned says which worked:

1. OSC 52 (`ESC ] 52 ; c ; <base64> BEL`) written to the controlling terminal: the terminal
   emulator sets its clipboard, also over SSH; inside tmux, tmux takes it (with
   `set-clipboard on`) and passes it on;
2. inside tmux (`$TMUX`), `tmux load-buffer -w -`: the tmux buffer, and with `-w` the outer
   terminal's clipboard;
3. the first of `wl-copy` (Wayland), `xclip -selection clipboard` (X11) and `pbcopy` (macOS)
   that is installed and succeeds.

With no terminal and none of those, nothing is copied and the line says so.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping

OSC52_LIMIT = 100_000  # bytes of base64 most terminals accept in one sequence
TOOLS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("wl-copy", (), "WAYLAND_DISPLAY"),
    ("xclip", ("-selection", "clipboard"), "DISPLAY"),
    ("pbcopy", (), None),
)


def _terminal_writer() -> Callable[[bytes], None] | None:
    try:
        descriptor = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
    except OSError:
        return None

    def write(data: bytes) -> None:
        try:
            os.write(descriptor, data)
        finally:
            os.close(descriptor)

    return write


def osc52(text: str) -> bytes:
    return b"\x1b]52;c;" + base64.b64encode(text.encode("utf-8", "surrogateescape")) + b"\x07"


def _run(command: list[str], text: str) -> bool:
    try:
        completed = subprocess.run(command, input=text.encode("utf-8", "surrogateescape"), capture_output=True,
                                   timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return completed.returncode == 0


def copy(text: str, *, env: Mapping[str, str] | None = None,
         terminal: Callable[[bytes], None] | bool | None = True) -> str:
    """Copies `text` every way that applies; returns the line to show. `terminal` is where OSC 52
    goes (`True`: the controlling terminal, `None`/`False`: nowhere)."""
    environment = os.environ if env is None else env
    ways: list[str] = []
    writer = _terminal_writer() if terminal is True else terminal or None
    sequence = osc52(text)
    if writer is not None and len(sequence) <= OSC52_LIMIT:
        try:
            writer(sequence)
            ways.append("OSC 52")
        except OSError:
            pass
    tmux = shutil.which("tmux", path=environment.get("PATH")) if environment.get("TMUX") else None
    if tmux and _run([tmux, "load-buffer", "-w", "-"], text):
        ways.append("tmux buffer")
    for tool, arguments, needs in TOOLS:
        if needs is not None and not environment.get(needs):
            continue
        found = shutil.which(tool, path=environment.get("PATH"))
        if found and _run([found, *arguments], text):
            ways.append(tool)
            break
    if not ways:
        return "could not copy: no terminal for OSC 52, and no tmux, wl-copy, xclip or pbcopy"
    return f"copied {len(text)} characters to the clipboard ({', '.join(ways)})"
