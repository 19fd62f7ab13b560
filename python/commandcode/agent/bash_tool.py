"""The `bash` tool: one shell command in the session's working directory, interruptible.

`bash {command, timeout?}` (`timeout` in milliseconds, default 120 s, at most 10 min) runs
`/bin/sh -c command` with stdin closed, in a process group of its own (`bash_guard.start_guarded`),
so that an interrupt or the timeout kills the command and everything it started (`killpg`,
SIGKILL) at once, not when a `sleep` ends; and so that when the agent ends, however it ends
(`kill -9` too), the guard of `bash_guard.py` kills what is left of the group. Output (stdout and stderr
interleaved as written) is kept up to `MAX_OUTPUT_CHARS`; beyond that it is drained and dropped,
and the result says how much was cut. A non-zero exit is a tool error ending with `Exit code N`.
When `cancel` is set the group is killed and `CommandInterrupted` (a `TurnInterrupted`) is
raised with what the command printed until then: the turn keeps it as the call's result
(`agent/turn.py`).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

from ..errors import TurnInterrupted
from .bash_guard import start_guarded

BASH_TIMEOUT_SECONDS = 120.0
MAX_TIMEOUT_SECONDS = 600.0
MAX_OUTPUT_CHARS = 30_000
_POLL_SECONDS = 0.02
_READ_BYTES = 65536


class _Output:
    """Collects a pipe's bytes up to a cap, counting what it drops."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.dropped = 0

    def drain(self, descriptor: int) -> None:
        while True:
            try:
                chunk = os.read(descriptor, _READ_BYTES)
            except OSError:
                return
            if not chunk:
                return
            room = self.cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.dropped += max(0, len(chunk) - max(room, 0))


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _pidfd(process: subprocess.Popen[bytes]) -> int | None:
    """A descriptor that becomes readable when `process` ends (Linux's pidfd), or None where the
    system has none (the wait then polls as `Popen.wait` does)."""
    try:
        return os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        return None


def _ended(process: subprocess.Popen[bytes], exit_signal: int | None, seconds: float) -> bool:
    """Waits up to `seconds` for `process` to end (reaped when it has): a pidfd wakes the wait
    the moment it ends, where `Popen.wait`'s polling sleeps up to a few milliseconds longer."""
    if exit_signal is None:
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True
    if not select.select([exit_signal], [], [], seconds)[0]:
        return False
    process.wait()
    return True


def _seconds(timeout: Any) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        return BASH_TIMEOUT_SECONDS
    return min(float(timeout) / 1000, MAX_TIMEOUT_SECONDS)


class CommandInterrupted(TurnInterrupted):
    """`cancel` stopped a running command; `output` is what it printed until then."""

    def __init__(self, output: str) -> None:
        super().__init__("interrupted; the running command was stopped")
        self.output = output


def run_bash(tool_input: dict[str, Any], cwd: Path, cancel: threading.Event | None = None,
             env: dict[str, str] | None = None) -> tuple[str, bool]:
    """Runs the command; returns `(text, is_error)`.

    Raises:
        CommandInterrupted: `cancel` was set while it ran (its process group is dead by then).
    """
    command = tool_input.get("command")
    if not isinstance(command, str) or not command.strip():
        return "Error: bash needs a `command`", True
    seconds = _seconds(tool_input.get("timeout"))
    read_end, write_end = os.pipe()
    try:
        process = start_guarded(command, cwd, write_end, {**os.environ, **(env or {})})
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    output = _Output(MAX_OUTPUT_CHARS * 4)  # bytes; cut to characters after decoding
    reader = threading.Thread(target=output.drain, args=(read_end,), daemon=True)
    reader.start()
    timed_out = interrupted = False
    exit_signal = _pidfd(process)
    try:
        waited = 0.0
        while True:
            if _ended(process, exit_signal, _POLL_SECONDS):
                break
            waited += _POLL_SECONDS
            if cancel is not None and cancel.is_set():
                interrupted = True
                _kill_group(process)
                break
            if waited >= seconds:
                timed_out = True
                _kill_group(process)
                break
    except BaseException:
        _kill_group(process)
        raise
    finally:
        if exit_signal is not None:
            os.close(exit_signal)
        reader.join(timeout=0.5)  # a background child may hold the pipe open: do not wait for it
        if not reader.is_alive():
            os.close(read_end)
    if interrupted:
        raise CommandInterrupted(_result(output, None, False, seconds)[0].removesuffix("(no output)").rstrip())
    return _result(output, process.returncode, timed_out, seconds)


def _result(output: _Output, returncode: int | None, timed_out: bool, seconds: float) -> tuple[str, bool]:
    text = output.kept.decode("utf-8", errors="replace")
    dropped_chars = 0
    if len(text) > MAX_OUTPUT_CHARS:
        dropped_chars = len(text) - MAX_OUTPUT_CHARS
        text = text[:MAX_OUTPUT_CHARS]
    text = text.rstrip("\n")
    if dropped_chars or output.dropped:
        more = f"{dropped_chars:,} more characters" if not output.dropped else f"{dropped_chars + output.dropped:,}+ more bytes"
        text += f"\n[output cut at {MAX_OUTPUT_CHARS:,} characters; {more} not shown]"
    if timed_out:
        return f"{text}\nError: command timed out after {seconds:g}s and was killed".strip(), True
    if returncode:
        code = f"killed by signal {-returncode}" if returncode < 0 else f"Exit code {returncode}"
        return f"{text}\n{code}".strip(), True
    return text or "(no output)", False
