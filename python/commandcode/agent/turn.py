"""Running one user turn into a session: checkpoint, model steps, tools, per-turn commit.

A turn opens a checkpoint, appends the user message, then alternates model steps and tool runs
(one assistant entry per model call, one user tool-result entry per tool call, as the real CLI
writes them) until the model answers without tools. `write_file`/`edit_file` targets are backed
up before the tool runs. The turn's entries are committed together at the end; if the model
or a tool step fails, what the turn produced is committed with a synthetic `Error: …` user
message, as the real CLI does, but never a dangling tool call: the step that failed (an assistant
`tool_use` whose results are not all there) is dropped first. If the commit itself fails (a full
disk), the writer cuts the transcript back to the previous commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..checkpoints.manager import CheckpointManager
from ..sessions.writer import SessionWriter
from ..storage.ids import epoch_ms, new_uuid
from .providers.base import Model
from .tools import EDITING_TOOLS, in_data_dir, nameable, run_tool, target_path

MAX_STEPS_PER_TURN = 64


@dataclass
class TurnResult:
    """The outcome of one turn."""

    text: str
    tool_calls: int = 0
    notices: list[str] = field(default_factory=list)
    error: str | None = None


class Conversation:
    """A session being extended turn by turn: the writer, the live context and checkpoints."""

    def __init__(self, writer: SessionWriter, model: Model, cwd: Path, messages: list[dict[str, Any]],
                 checkpoints: CheckpointManager | None) -> None:
        self.writer = writer
        self.model = model
        self.cwd = cwd
        self.messages = messages
        self.checkpoints = checkpoints

    def _append(self, message: dict[str, Any], **extra: Any) -> None:
        self.writer.append_message(message, **extra)
        self.messages.append(message)

    def _mark(self) -> tuple[tuple[int, int, str | None, bool], int]:
        """Where the turn stands: a step that fails goes back here."""
        return self.writer.mark(), len(self.messages)

    def _back_to(self, mark: tuple[tuple[int, int, str | None, bool], int]) -> None:
        writer_mark, message_count = mark
        self.writer.discard_to(writer_mark)
        del self.messages[message_count:]

    def run_turn(self, prompt: str) -> TurnResult:
        """Runs one prompt to completion and commits it."""
        result = TurnResult(text="")
        if self.checkpoints is not None:
            last_id = next((message.get("meta", {}).get("messageId") for message in reversed(self.messages)
                            if isinstance(message.get("meta"), dict) and message["meta"].get("messageId")), None)
            self.checkpoints.open_checkpoint(prompt, len(self.messages), last_id, self.writer.leaf_id)
        self._append({"role": "user", "content": [{"type": "text", "text": prompt}],
                      "meta": {"source": "user", "createdAt": epoch_ms(), "messageId": new_uuid()}})
        step = self._mark()
        try:
            for _ in range(MAX_STEPS_PER_TURN):
                step = self._mark()  # a step is whole (its tool calls and all their results) or not written
                reply = self.model.respond(self.messages)
                self._append({"role": "assistant", "content": reply.content,
                              "meta": {"source": "model", "createdAt": epoch_ms(), "messageId": new_uuid()}},
                             usage=reply.usage, model=self.model.model_id)
                if not reply.tool_uses:
                    result.text = "\n".join(block.get("text", "") for block in reply.content if block.get("type") == "text")
                    break
                for tool_use in reply.tool_uses:
                    self._run_tool(tool_use, result)
            else:
                result.error = f"the model did not finish within {MAX_STEPS_PER_TURN} steps"
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

    def _commit(self, *, force: bool, result: TurnResult) -> None:
        """Commits the turn, then the checkpoint's after-edit digests (so both survive a crash).

        The digests only sharpen outside-edit detection: once the turn is committed, failing to
        write them is a notice, not a failed turn."""
        self.writer.commit(force=force)
        if self.checkpoints is not None:
            try:
                self.checkpoints.flush()
            except OSError as error:
                result.notices.append(f"could not record this turn's after-edit digests: {error.strerror or error}")

    def _run_tool(self, tool_use: dict[str, Any], result: TurnResult) -> None:
        name = str(tool_use.get("name"))
        raw_input = tool_use.get("input")
        tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        path = target_path(tool_input, self.cwd)
        if path is not None and not nameable(path):
            path = None  # no file can have this name (NUL, lone surrogate): nothing to back up; the tool says so
        if name in EDITING_TOOLS and path is not None and in_data_dir(path) is not None:
            path = None  # the tool refuses it: none of our own files is backed up or recorded
        if name in EDITING_TOOLS and path is not None and self.checkpoints is not None:
            result.notices.extend(self.checkpoints.backup_before_edit(str(path)))
        if name == "bash" and self.checkpoints is not None:
            result.notices.extend(self.checkpoints.before_shell())
        outcome = run_tool(name, tool_input, self.cwd)
        if name == "bash" and self.checkpoints is not None:
            result.notices.extend(self.checkpoints.after_shell())
        if name in EDITING_TOOLS and path is not None and self.checkpoints is not None and not outcome.is_error:
            self.checkpoints.record_after_edit(str(path))
        result.tool_calls += 1
        self._append({"role": "user",
                      "content": [{"type": "tool_result", "tool_use_id": tool_use.get("id"),
                                   "content": [{"type": "text", "text": outcome.text}]}],
                      "meta": {"source": "tool", "messageId": new_uuid()}})
