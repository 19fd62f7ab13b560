"""What `-p` prints: the reply as text, one result object (`--output-format json`), or Claude
Code's stream-json events, one JSON object per line (`--output-format stream-json`).

The stream is `system`/`init` first (session id, cwd, model, tools, permission mode), then an
`assistant` event per model step and a `user` event per tool result as they happen, and a
`result` event last, always — also when the turn fails, with `is_error: true` and the error as
`result`. The shapes are documented as JSON Schema in `docs/headless-schema.json`, which tests
check every event against; they do not change when the on-disk format does.

Background sub-agent runs still going when the turn ends are waited for
(`wait_for_background_runs`): one stderr line says which, one line per run as it ends (agent,
id, outcome), and the result object lists every background run whose end the model did not
collect (`background_agents`); one that did not complete makes the run an error (exit 1).
Ctrl+C stops the wait and the runs (exit 130). The real CLI (1.64.0) does not wait: its `-p`
ends with the turn and cuts a background run still going (tests/e2e/test_real_cli_subagents.py);
we wait, so the work the model delegated is done (or its failure said) when `-p` returns.

Output that cannot be written (stdout closed by the reader, `| head -1`, a closed descriptor, a
full disk) never stops the turn: the first failed write marks the output `lost`, stdout is
pointed at `/dev/null`, and the turn runs and is saved as the user typed it; the run then exits
non-zero with one line saying so (`run.run_print`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..agent.events import TurnEvent
from ..agent.tool_specs import SPAWN_TOOL_NAMES, TOOL_NAMES
from ..present.console import print_json, print_json_line, printable, warn, write_out

if TYPE_CHECKING:
    from ..config.context import ProjectContext

FORMATS = ("text", "json", "stream-json")


def _wire_usage(usage: dict[str, Any]) -> dict[str, Any]:
    return {"input_tokens": int(usage.get("inputTokens", 0)), "output_tokens": int(usage.get("outputTokens", 0)),
            "cache_read_input_tokens": int(usage.get("cacheReadTokens", 0)),
            "cache_creation_input_tokens": int(usage.get("cacheWriteTokens", 0))}


def _wire_content(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            out.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "tool_use":
            tool_input = block.get("input")
            out.append({"type": "tool_use", "id": str(block.get("id")), "name": str(block.get("name")),
                        "input": tool_input if isinstance(tool_input, dict) else {}})
        elif kind == "thinking":
            out.append({"type": "thinking", "thinking": str(block.get("thinking", "")), "signature": ""})
    return out


class Reporter:
    """Prints one headless run in the chosen format."""

    def __init__(self, output_format: str) -> None:
        self.format = output_format
        self.started = time.monotonic()
        self.session_id: str | None = None
        self.model_id = ""
        self.cwd = ""
        self.permission_mode = "default"
        self.initialised = False
        self.noticed: list[str] = []  # notices printed as they came (stderr, every format)
        self.usage: dict[str, int | float] = {}
        self.calls = 0
        self.api_seconds = 0.0
        self._step_started = time.monotonic()
        self._last_usage: dict[str, Any] = {}
        self.lost = False  # a write to stdout failed: the rest of the output goes nowhere

    def _emit(self, write: Callable[[Any], None], value: Any) -> None:
        """Writes `value` with `write`; a failed write marks the output lost (module docstring)."""
        if self.lost:
            return
        try:
            if sys.stdout is None:  # started with descriptor 1 closed
                raise OSError("stdout is closed")
            write(value)
        except (OSError, ValueError, SystemExit):  # a closed file object; rich exits on a broken pipe
            self.lost = True
            _silence_stdout()

    def init(self, *, session_id: str | None, cwd: str, model_id: str, permission_mode: str) -> None:
        """The session is open: the stream's `system`/`init` event."""
        self.session_id, self.cwd, self.model_id, self.permission_mode = session_id, cwd, model_id, permission_mode
        self.initialised = True
        self._step_started = time.monotonic()
        if self.format == "stream-json":
            self._emit(print_json_line, {"type": "system", "subtype": "init", "session_id": session_id, "cwd": cwd,
                             "model": model_id, "tools": [*TOOL_NAMES, *SPAWN_TOOL_NAMES], "permissionMode": permission_mode,
                             "output_style": "default"})

    def on_event(self, event: TurnEvent) -> None:
        """A live turn event (`agent.turns.run_turn`'s `on_event`)."""
        if event.kind == "notice":  # an automatic compaction, a backup the cap dropped: a warning line now
            warn(event.text)
            self.noticed.append(event.text)
            return
        if event.kind == "usage":
            self.calls += 1
            self.api_seconds += time.monotonic() - self._step_started
            for key, value in event.usage.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self.usage[key] = self.usage.get(key, 0) + value
        elif event.kind == "tool_result":
            self._step_started = time.monotonic()
        if self.format != "stream-json":
            return
        if event.kind == "assistant":
            message = event.message
            self._emit(print_json_line, {"type": "assistant", "session_id": self.session_id, "parent_tool_use_id": None,
                             "message": {"id": str((message.get("meta") or {}).get("messageId", "")), "type": "message",
                                         "role": "assistant", "model": self.model_id,
                                         "content": _wire_content(message.get("content") or []),
                                         "usage": _wire_usage(self._last_usage)}})
        elif event.kind == "tool_result":
            [block] = event.message["content"]
            text = "\n".join(str(part.get("text", "")) for part in block.get("content") or [])
            self._emit(print_json_line, {"type": "user", "session_id": self.session_id, "parent_tool_use_id": None,
                             "message": {"role": "user", "content": [{"type": "tool_result",
                                                                      "tool_use_id": str(block.get("tool_use_id")),
                                                                      "content": text, "is_error": event.is_error}]}})
        if event.kind == "usage":
            self._last_usage = dict(event.usage)

    def result(self, *, text: str, error: str | None, extra: dict[str, Any] | None = None) -> None:
        """The run ended (`error` None: it succeeded): the reply, or the result object/event."""
        if self.format == "text":
            if error is None and text:
                self._emit(write_out, printable(text))  # no raw control bytes
            return
        if self.format == "stream-json" and not self.initialised:
            self.init(session_id=self.session_id, cwd=self.cwd, model_id=self.model_id,
                      permission_mode=self.permission_mode)
        payload: dict[str, Any] = {
            "type": "result", "subtype": "success" if error is None else "error_during_execution",
            "is_error": error is not None, "result": text if error is None else f"Error: {error}",
            "session_id": self.session_id, "duration_ms": int((time.monotonic() - self.started) * 1000),
            "duration_api_ms": int(self.api_seconds * 1000), "num_turns": self.calls,
            "total_cost_usd": round(float(self.usage.get("costUsd", 0.0)), 10), "usage": _wire_usage(self.usage),
            "model": self.model_id, "error": error}
        payload.update(extra or {})
        self._emit(print_json if self.format == "json" else print_json_line, payload)


def wait_for_background_runs(turns: Any) -> tuple[list[dict[str, Any]], str | None]:
    """Waits for the background sub-agent runs of `turns` (a `SessionTurns`) still going, saying
    so on stderr; returns the runs whose end the model did not collect, as the result object
    lists them, and the error line when one of them did not complete (None: all completed)."""

    def waiting(runs: list[Any]) -> None:
        ids = ", ".join(run.agent_id for run in runs)
        _note(f"waiting for {len(runs)} background sub-agent{'s' if len(runs) > 1 else ''} to finish ({ids}); "
              "Ctrl+C stops them")

    runs = turns.wait_background_subagents(lambda run: _note(run.ended_line()), waiting)
    listed = [{"agent_id": run.agent_id, "subagent_type": run.agent_type, "description": run.description,
               "status": run.end.status if run.end is not None else "running",
               "error": run.end.error if run.end is not None else None} for run in runs]
    unfinished = [run for run in runs if run.end is None or run.end.status != "completed"]
    if not unfinished:
        return listed, None
    what = "; ".join(f"{run.agent_id} {run.outcome_words()}" for run in unfinished)
    return listed, f"{len(unfinished)} background sub-agent{'s' if len(unfinished) > 1 else ''} did not complete: {what}"


def _note(line: str) -> None:
    """One plain stderr line, in one write (rich's buffered print, cut by a Ctrl+C, would print
    it again with the next line)."""
    try:
        sys.stderr.write(printable(line, one_line=True) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # stderr closed or gone: the run goes on
        pass


def follow_share(files: Any, project: ProjectContext) -> None:
    """A session shared on a team service (the one the settings of `project`, the session's
    context, name) publishes this run's commits (`sharing.client.follow_headless`); a problem
    with the service is one warning line, never the run's failure."""
    if files.share.exists():  # the common case costs one stat and no import
        from ..sharing.client import follow_headless

        follow_headless(files, warn, project)


def _silence_stdout() -> None:
    """Points descriptor 1 at `/dev/null`, so nothing later (the interpreter's flush at exit
    included) writes into the closed pipe again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(null, 1)
    except OSError:
        pass
    finally:
        os.close(null)
    if sys.stdout is not None:
        try:
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115  (descriptor 1 itself, never closed)
        except (OSError, ValueError):
            pass
