"""Running one user turn into a session: checkpoint, model steps, tools, per-turn commit.

A turn opens a checkpoint, appends the user message, then alternates model steps and tool runs
(one assistant entry per model call, one user tool-result entry per tool call, as the real CLI
writes them) until the model answers without tools. `write_file`/`edit_file` targets are backed
up before the tool runs. The turn's entries are committed together at the end; if the model
or a tool step fails, what the turn produced is committed with a synthetic `Error: …` user
message, as the real CLI does, but never a dangling tool call: the step that failed (an assistant
`tool_use` whose results are not all there) is dropped first. If the commit itself fails (a full
disk), the writer cuts the transcript back to the previous commit.

Live output: `on_event` gets `agent.events.TurnEvent`s (text deltas, tool starts and ends,
notices, usage, whole assistant and tool-result messages) as they happen.

Interruption (the user's Esc: `cancel` set): the model call or the running `bash` stops, and
the turn keeps what was said, as Claude Code does: the prompt, the steps that finished, the
reply text streamed so far (an assistant message without `usage`), a result for every tool call
that has none (the running command's output so far and that it was stopped, the rest
`Skipped — the run was interrupted.`, the real CLI's words), then the real CLI's marker, a user
message `Interrupted by user` with meta `{messageId}` (what its run-error path writes for an
interrupt; it shows it as "Interrupted · What should Command Code do instead?" and sends it to
the model). All of it is one commit, the same append a finished turn makes: a kill before it
leaves nothing of the turn, never part of it. `TurnResult.interrupted` says so. A `cancel` set
before the turn started writes nothing and raises `TurnInterrupted`.

Permissions: `gate(name, input)` is asked before each tool runs; a `ToolResult` it returns is
the refusal the model sees instead of running the tool. A tool call the provider could not
decode (`ModelReply.input_errors`) is a tool error too, never a crash.

Tools beyond the file and shell ones: `tools` are the specs the model is offered (None: the
file and shell tools), `handlers` run the extra ones by name (the sub-agent tools,
`agent/subagents/`), `before_step` sees each step's calls before any runs (it starts parallel
sub-agents). A call of a tool not offered is a tool error the model sees (a sub-agent asking
for `agent` is told it cannot spawn). A sub-agent's run is a `Conversation` too, with
`opens_checkpoint=False` (its edits go to the parent's checkpoint), `max_steps` its turn limit
and `commit_steps` (each whole step is committed as it ends: a run killed with its process keeps
the steps it finished, never half of one).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import TurnInterrupted
from ..sessions.context import INTERRUPTED_BY_USER
from ..sessions.writer import SessionWriter
from ..storage.ids import epoch_ms, new_uuid
from .events import OnEvent, TurnEvent
from .providers.base import Model, ModelReply
from .tool_specs import SPAWN_TOOL_NAMES, TOOL_NAMES
from .tools import EDITING_TOOLS, ToolResult, in_data_dir, nameable, run_tool, target_path

Gate = Callable[[str, dict[str, Any]], ToolResult | None]
ToolGuard = Callable[[str, dict[str, Any], Path], "str | None"]
ToolHandler = Callable[[str, dict[str, Any], "threading.Event | None"], ToolResult]
"""Runs an extra tool: (the call's `tool_use` id, its input, the turn's cancel). Raising
`TurnInterrupted` with a `result_text` attribute gives that text as the call's result."""
SPAWN_TOOLS = frozenset(SPAWN_TOOL_NAMES)


class TurnCheckpoints(Protocol):
    """What a turn asks of the checkpoints: `checkpoints.manager.CheckpointManager`, or for a
    sub-agent's run the parent's as its tools see it (`agent/subagents/checkpoint_view.py`)."""

    def open_checkpoint(self, prompt: str, message_count: int, last_message_id: str | None,
                        leaf_entry_id: str | None = None) -> None: ...

    def editing(self, path: str) -> AbstractContextManager[list[str]]: ...

    def backup_before_edit(self, path: str) -> list[str]: ...

    def record_after_edit(self, path: str) -> None: ...

    def before_shell(self) -> list[str]: ...

    def after_shell(self) -> list[str]: ...

    def flush(self) -> None: ...

    def take_notices(self) -> list[str]: ...

MAX_STEPS_PER_TURN = 64
TOOL_SKIPPED = "Skipped — the run was interrupted."  # the real CLI's result of a call an interrupt skipped
TOOL_STOPPED = "Interrupted by user: the command was stopped before it finished."


@dataclass
class TurnResult:
    """The outcome of one turn."""

    text: str
    tool_calls: int = 0
    notices: list[str] = field(default_factory=list)
    error: str | None = None
    usage: dict[str, int | float] = field(default_factory=dict)
    model_calls: int = 0
    interrupted: bool = False  # the user interrupted it: what was said so far is committed, marked
    step_limit: bool = False  # it stopped at `max_steps` without a final answer

    def add_usage(self, usage: dict[str, Any]) -> None:
        """Adds one model call's usage to the turn's totals."""
        self.model_calls += 1
        for key, value in usage.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.usage[key] = self.usage.get(key, 0) + value


def _ignore_event(event: TurnEvent) -> None:
    del event


class Conversation:
    """A session being extended turn by turn: the writer, the live context and checkpoints."""

    def __init__(self, writer: SessionWriter, model: Model, cwd: Path, messages: list[dict[str, Any]],
                 checkpoints: TurnCheckpoints | None, *, effort: str | None = None, gate: Gate | None = None,
                 on_event: OnEvent | None = None, cancel: threading.Event | None = None,
                 entry_ids: list[str] | None = None,
                 view: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
                 tool_env: dict[str, str] | None = None, tool_guard: ToolGuard | None = None,
                 system: str | None = None, tools: list[dict[str, Any]] | None = None,
                 handlers: dict[str, ToolHandler] | None = None,
                 before_step: Callable[[list[dict[str, Any]]], None] | None = None,
                 max_steps: int = MAX_STEPS_PER_TURN, opens_checkpoint: bool = True,
                 commit_steps: bool = False) -> None:
        self.writer = writer
        self.model = model
        self.cwd = cwd
        self.messages = messages
        self.checkpoints = checkpoints
        self.effort = effort
        self.gate = gate
        self.emit: OnEvent = on_event or _ignore_event
        self.cancel = cancel
        self.entry_ids = entry_ids if entry_ids is not None else []  # parallel to `messages`
        self.view = view  # what the model is sent (fast compaction trims old tool output)
        self.tool_env = tool_env or {}  # added to the shell tool's environment ($COMMANDCODE_SCRATCHPAD)
        self.tool_guard = tool_guard  # refuses a call before it runs (worktree isolation): its text is the result
        self.system = system  # the system prompt every model call gets (agent/system_prompt.py)
        self.tools = tools  # the specs offered (None: the file and shell tools)
        self.handlers = handlers or {}
        self.before_step = before_step
        self.max_steps = max_steps
        self.opens_checkpoint = opens_checkpoint
        self.commit_steps = commit_steps
        self._streamed: list[str] = []  # the text deltas of the model call under way

    def _append(self, message: dict[str, Any], **extra: Any) -> None:
        self.entry_ids.append(self.writer.append_message(message, **extra))
        self.messages.append(message)

    def _mark(self) -> tuple[tuple[int, int, str | None, bool], int]:
        """Where the turn stands: a step that fails goes back here."""
        return self.writer.mark(), len(self.messages)

    def _back_to(self, mark: tuple[tuple[int, int, str | None, bool], int]) -> None:
        writer_mark, message_count = mark
        self.writer.discard_to(writer_mark)
        del self.messages[message_count:]
        del self.entry_ids[message_count:]

    def run_turn(self, prompt: str) -> TurnResult:
        """Runs one prompt to completion and commits it.

        Raises:
            TurnInterrupted: `cancel` was set before the turn started; nothing was written. (Set
                while it runs, the turn is committed as far as it got: `result.interrupted`.)
        """
        if self.cancel is not None and self.cancel.is_set():  # before the checkpoint opens: nothing is written
            raise TurnInterrupted("interrupted")
        result = TurnResult(text="")
        if self.checkpoints is not None and self.opens_checkpoint:
            last_id = next((message.get("meta", {}).get("messageId") for message in reversed(self.messages)
                            if isinstance(message.get("meta"), dict) and message["meta"].get("messageId")), None)
            self.checkpoints.open_checkpoint(prompt, len(self.messages), last_id, self.writer.leaf_id)
        self._append({"role": "user", "content": [{"type": "text", "text": prompt}],
                      "meta": {"source": "user", "createdAt": epoch_ms(), "messageId": new_uuid()}})
        step = self._mark()
        try:
            for _ in range(self.max_steps):
                step = self._mark()  # a step is whole (its tool calls and all their results) or not written
                self._streamed = []
                sent = self.view(self.messages) if self.view is not None else self.messages
                reply = self.model.respond(sent, on_text=self._on_text, cancel=self.cancel, system=self.system,
                                           tools=self.tools)
                self._record_reply(reply, result)
                if not reply.tool_uses:
                    result.text = "\n".join(block.get("text", "") for block in reply.content if block.get("type") == "text")
                    break
                self._run_tools(reply, result)
                if self.commit_steps:
                    self.writer.commit()
            else:
                result.step_limit = True
                result.error = f"the model did not finish within {self.max_steps} steps"
        except TurnInterrupted:
            self._keep_interrupted(step, result)
            return result
        except Exception as error:
            result.error = str(error) or type(error).__name__
            self._back_to(step)
            self._append({"role": "user", "content": [{"type": "text", "text": f"Error: {result.error}"}],
                          "meta": {"messageId": new_uuid()}})
            self._commit(force=True, result=result)
            raise
        if result.error:
            self._append({"role": "user", "content": [{"type": "text", "text": f"Error: {result.error}"}],
                          "meta": {"messageId": new_uuid()}})
        self._commit(force=result.error is not None, result=result)
        if self.checkpoints is not None:
            result.notices.extend(self.checkpoints.take_notices())  # once per turn
        return result

    def _keep_interrupted(self, step: tuple[tuple[int, int, str | None, bool], int], result: TurnResult) -> None:
        """Commits an interrupted turn as far as it got (the module docstring): the reply
        streamed so far, a result for each tool call without one, the real CLI's marker."""
        result.interrupted = True
        if len(self.messages) == step[1]:  # the model call was cut: keep the text it streamed
            self._back_to(step)
            streamed = "".join(self._streamed)
            if streamed.strip():
                result.text = streamed
                self._append({"role": "assistant", "content": [{"type": "text", "text": streamed}],
                              "meta": {"source": "model", "createdAt": epoch_ms(), "messageId": new_uuid()}},
                             model=self.model.model_id, effort=self.effort)
        self._append({"role": "user", "content": [{"type": "text", "text": INTERRUPTED_BY_USER}],
                      "meta": {"messageId": new_uuid()}})
        self._commit(force=True, result=result)
        if self.checkpoints is not None:
            result.notices.extend(self.checkpoints.take_notices())

    def _commit(self, *, force: bool, result: TurnResult) -> None:
        """Commits the turn, then the checkpoint's after-edit digests (so both survive a crash).

        The digests only sharpen outside-edit detection: once the turn is committed, failing to
        write them is a notice, not a failed turn."""
        self.writer.commit(force=force)
        self._flush_checkpoints(result)

    def _flush_checkpoints(self, result: TurnResult) -> None:
        if self.checkpoints is not None:
            try:
                self.checkpoints.flush()
            except OSError as error:
                result.notices.append(f"could not record this turn's after-edit digests: {error.strerror or error}")

    def _on_text(self, delta: str) -> None:
        self._streamed.append(delta)
        self.emit(TurnEvent("text", text=delta))

    def _record_reply(self, reply: ModelReply, result: TurnResult) -> None:
        message = {"role": "assistant", "content": reply.content,
                   "meta": {"source": "model", "createdAt": epoch_ms(), "messageId": new_uuid()}}
        self._append(message, usage=reply.usage, model=self.model.model_id, effort=self.effort)
        result.add_usage(reply.usage)
        self.emit(TurnEvent("usage", usage=dict(reply.usage)))
        self.emit(TurnEvent("assistant", message=message))

    def _run_tools(self, reply: ModelReply, result: TurnResult) -> None:
        """Runs one step's tool calls in order. Interrupted, every call of the step still gets
        its result (the step stays whole): the one running says it was stopped, with its
        output so far; those not started say they were skipped."""
        if self.before_step is not None:
            self.before_step(reply.tool_uses)
        for position, tool_use in enumerate(reply.tool_uses):
            if self.cancel is not None and self.cancel.is_set():
                for rest in reply.tool_uses[position:]:
                    self._append_result(rest, TOOL_SKIPPED)
                raise TurnInterrupted("interrupted")
            try:
                self._run_tool(tool_use, result, reply.input_errors.get(str(tool_use.get("id"))))
            except TurnInterrupted as interruption:  # raised while it ran: it has no result yet
                output = getattr(interruption, "output", "")
                text = getattr(interruption, "result_text", None) or (
                    f"{output}\n{TOOL_STOPPED}" if output else TOOL_STOPPED)
                self._append_result(tool_use, text)
                for rest in reply.tool_uses[position + 1:]:
                    self._append_result(rest, TOOL_SKIPPED)
                raise

    def _append_result(self, tool_use: dict[str, Any], text: str) -> dict[str, Any]:
        message = {"role": "user",
                   "content": [{"type": "tool_result", "tool_use_id": tool_use.get("id"),
                                "content": [{"type": "text", "text": text}]}],
                   "meta": {"source": "tool", "messageId": new_uuid()}}
        self._append(message)
        return message

    def _run_tool(self, tool_use: dict[str, Any], result: TurnResult, input_error: str | None = None) -> None:
        name = str(tool_use.get("name"))
        raw_input = tool_use.get("input")
        tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        tool_use_id = str(tool_use.get("id"))
        self.emit(TurnEvent("tool_start", name=name, input=tool_input, tool_use_id=tool_use_id))
        if input_error is not None:
            outcome = ToolResult(f"Error: {input_error}", True)
        elif not isinstance(raw_input, dict):
            outcome = ToolResult(f"Error: the input of {name} must be a JSON object", True)
        else:
            # The worktree guard first: it cannot be switched off, not even by a permission mode.
            guarded = self.tool_guard(name, tool_input, self.cwd) if self.tool_guard is not None else None
            refused = ToolResult(guarded, True) if guarded is not None else self._not_offered(name) or (
                self.gate(name, tool_input) if self.gate is not None else None)
            handler = self.handlers.get(name)
            outcome = refused if refused is not None else handler(tool_use_id, tool_input, self.cancel) \
                if handler is not None else self._execute(name, tool_input, result)
        result.tool_calls += 1
        message = self._append_result(tool_use, outcome.text)
        self.emit(TurnEvent("tool_end", name=name, input=tool_input, tool_use_id=tool_use_id, outcome=outcome.text,
                            is_error=outcome.is_error))
        self.emit(TurnEvent("tool_result", name=name, tool_use_id=tool_use_id, message=message,
                            is_error=outcome.is_error))

    def _not_offered(self, name: str) -> ToolResult | None:
        """The tool error for a call of a tool this conversation did not offer (None: offered)."""
        if name in SPAWN_TOOLS and name not in self.handlers:
            return ToolResult(f"Error: {name} is not available here: a sub-agent cannot start or manage "
                              "sub-agents; do the work with your own tools", True)
        if self.tools is None or any(spec.get("name") == name for spec in self.tools):
            return None
        if name in TOOL_NAMES:
            return ToolResult(f"Error: {name} is not available to this agent (its tools: "
                              f"{', '.join(str(spec.get('name')) for spec in self.tools) or 'none'})", True)
        return None  # a tool nobody has: the tool runner's own error

    def _execute(self, name: str, tool_input: dict[str, Any], result: TurnResult) -> ToolResult:
        path = target_path(tool_input, self.cwd)
        if path is not None and not nameable(path):
            path = None  # no file can have this name (NUL, lone surrogate): nothing to back up; the tool says so
        if name in EDITING_TOOLS and path is not None and in_data_dir(path) is not None:
            path = None  # the tool refuses it: none of our own files is backed up or recorded
        if name in EDITING_TOOLS and path is not None and self.checkpoints is not None:
            with self.checkpoints.editing(str(path)) as notices:  # backed up, then written: no one else writes it
                result.notices.extend(notices)
                for notice in notices:
                    self.emit(TurnEvent("notice", text=notice))
                outcome = run_tool(name, tool_input, self.cwd, cancel=self.cancel, env=self.tool_env)
                if not outcome.is_error:
                    self.checkpoints.record_after_edit(str(path))
            return outcome
        if name == "bash" and self.checkpoints is not None:  # shell tracking (checkpoints/shell_tracking.py)
            result.notices.extend(self.checkpoints.before_shell())
        try:
            outcome = run_tool(name, tool_input, self.cwd, cancel=self.cancel, env=self.tool_env)
        finally:  # an interrupted command's changes are recorded too, so a rewind undoes them
            if name == "bash" and self.checkpoints is not None:
                result.notices.extend(self.checkpoints.after_shell())
        return outcome
