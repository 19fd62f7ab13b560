"""The shell's status line: the built-in one, or the output of the user's `statusLine` command.

The built-in line shows the session name, model, effort, context tokens and their share of the
window, cost, permission mode and checkpoint state. A `statusLine` setting
(`{"type": "command", "command": "..."}`, as Claude Code writes it) runs that command through
`/bin/sh` with the status as JSON on stdin (our `/status` fields plus Claude Code's
`session_id`, `transcript_path`, `model.id`/`display_name`, `workspace.current_dir` and
`cost.total_cost_usd`), and shows the first line of its output instead. The command runs in a
background thread, at most one at a time, with a timeout; while it runs the last output stays,
and a failure is shown on the line itself (never a traceback).
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable
from typing import Any

from ..present.status import builtin_line

STATUS_COMMAND_TIMEOUT = 5.0


def status_json(status: dict[str, Any]) -> str:
    """What a `statusLine` command gets on stdin."""
    payload = dict(status)
    payload.update({"session_id": status.get("id"), "transcript_path": status.get("path"),
                    "model": {"id": status.get("model"), "display_name": status.get("model")},
                    "workspace": {"current_dir": status.get("cwd")},
                    "cost": {"total_cost_usd": status.get("cost_usd", 0.0)}})
    return json.dumps(payload)


class StatusLine:
    """The status line text, built in or from the user's command."""

    def __init__(self, command: str | None, redraw: Callable[[], None]) -> None:
        self.command = command
        self.redraw = redraw
        self._shown: str | None = None
        self._running = False
        self._last_input: str | None = None
        self._lock = threading.Lock()

    def text(self, status: dict[str, Any]) -> str:
        if not self.command:
            return builtin_line(status)
        stdin = status_json(status)
        with self._lock:
            start = not self._running and stdin != self._last_input
            if start:
                self._running, self._last_input = True, stdin
        if start:
            threading.Thread(target=self._run, args=(stdin,), daemon=True).start()
        return self._shown if self._shown is not None else builtin_line(status)

    def _run(self, stdin: str) -> None:
        assert self.command is not None
        try:
            completed = subprocess.run(["/bin/sh", "-c", self.command], input=stdin, capture_output=True, text=True,
                                       errors="replace", timeout=STATUS_COMMAND_TIMEOUT, start_new_session=True)
            lines = completed.stdout.splitlines()
            if completed.returncode != 0 and not lines:
                shown = f"statusLine command failed (exit {completed.returncode})"
            else:
                shown = lines[0] if lines else ""
        except subprocess.TimeoutExpired:
            shown = f"statusLine command timed out after {STATUS_COMMAND_TIMEOUT:g}s"
        except OSError as error:
            shown = f"statusLine command failed: {error.strerror or error}"
        from ..present.console import printable

        with self._lock:
            self._shown, self._running = printable(shown, one_line=True), False
        self.redraw()
