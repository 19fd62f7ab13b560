"""One sub-agent run, start to end, on the calling thread: `execute(context, request, cancel)`.

The run is a `Conversation` of its own (`agent/turn.py`): its agent's body as system prompt (with
the working directory and the parent's scratchpad lines, so the scratchpad is shared and silent),
the tools its agent grants (never the spawn tools), its model, effort and turn limit (`maxTurns`
→ `max_steps`), and a permission gate built as the parent's is: the same settings, the session's
grants (an answer given to a run is a grant of the session, as the parent's are) and the
permission mode the agent's front matter asks for (a parent in plan or bypass mode keeps it).
A run asks as the parent does, foreground or background: its question names the run
(`PermissionRequest.origin`) and is withdrawn when the run is stopped (`cancel`); where the parent
has nobody to ask (`-p`), or the agent says `dont-ask`, headless rules refuse what would be asked
with a tool error its model sees.

It is written through `SubagentTranscript` beside the parent session (format §21): a commit per
step of the run (its model reply with all its tool results), the meta's final status at the end. How it ended is a `RunEnd`: `completed`;
`max_turns` (the turn limit cut it); `killed` (`cancel`: `agent_output kill`, the shell's exit);
`failed` (a provider error, a failure of ours). Every end has an `Outcome` for the result texts
of `agent/agents/results.py`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import TurnInterrupted
from ...sessions.context import INTERRUPTED_BY_USER
from ...sessions.files import SessionFiles
from ...sessions.subagent_writer import SubagentTranscript
from ...storage.ids import new_uuid
from ..agents.definitions import OUR_PERMISSION_MODES, AgentDefinition
from ..agents.results import Outcome
from ..agents.tool_access import ToolGrant
from ..events import PROGRESS, TOOL_START, OnEvent, TurnEvent
from ..permissions import AskPermission, Grants, PermissionRequest, Policy
from ..providers.base import Model, Reasons
from ..tool_specs import TOOL_SPECS
from ..turn import Conversation, TurnCheckpoints, TurnResult

if TYPE_CHECKING:
    from ...config.context import ProjectContext
    from ...workspace.session_space import ToolSpace

_REAL_MODE = {ours: real for real, ours in OUR_PERMISSION_MODES.items()}


@dataclass(frozen=True)
class RunContext:
    """What a run takes from its parent session when it starts: where (`files`, `cwd`,
    `persist`), the parent's model, effort and effective permission mode, its project context
    (the settings the turn read: the run's permission rules), who answers a
    permission question (`ask`; None: nobody), the session's `grants`, where notices go, the
    tool space (scratchpad, worktree guard), the parent's checkpoint as a run sees it, and where
    a foreground run's progress goes (its tool calls, as `progress` events of the parent's call)."""

    files: SessionFiles
    cwd: Path
    persist: bool
    model: Model
    effort: str | None
    permission_mode: str
    project: ProjectContext
    ask: AskPermission | None
    grants: Grants
    notify: Callable[[str], None]
    space: ToolSpace
    checkpoints: TurnCheckpoints | None
    progress: OnEvent | None = None  # the parent turn's events: a foreground run's tool calls show there


@dataclass(frozen=True)
class RunRequest:
    """One `agent` call, checked: the agent, its tools, the task, and the run's id and model."""

    definition: AgentDefinition
    grant: ToolGrant
    prompt: str
    description: str
    tool_use_id: str | None
    agent_id: str
    background: bool
    model: Model


@dataclass(frozen=True)
class RunEnd:
    """How a run ended (`status`: completed, max_turns, killed, failed), its `Outcome`, and the
    error line of a failed one."""

    status: str
    outcome: Outcome
    error: str | None = None


def run_permission(definition: AgentDefinition, parent_mode: str) -> tuple[str, bool]:
    """The permission mode (ours) a run of `definition` starts in, and whether it may ask."""
    real = definition.run_permission_mode(_REAL_MODE.get(parent_mode, "default"))
    if real == "dont-ask":
        return parent_mode, False
    return OUR_PERMISSION_MODES.get(real, parent_mode), True


def tool_specs_for(grant: ToolGrant) -> list[dict[str, Any]]:
    """The specs of the tools a run is granted, in its grant's order."""
    by_name = {spec["name"]: spec for spec in TOOL_SPECS}
    return [by_name[name] for name in grant.granted if name in by_name]


def system_for(definition: AgentDefinition, context: RunContext) -> str:
    """The run's system prompt: its agent's body, where it works, the scratchpad lines."""
    parts = [definition.system_prompt.strip(), f"Working directory: {context.cwd}"]
    scratchpad = context.space.prompt()
    if scratchpad:
        parts.append(scratchpad)
    return "\n\n".join(part for part in parts if part)


def _progress(context: RunContext, request: RunRequest) -> OnEvent | None:
    """The run's events, as the parent's turn sees them: each tool call it starts is one
    `progress` line of the parent's `agent` call (nothing for a background run)."""
    emit = context.progress
    if emit is None or request.background:
        return None

    def forward(event: TurnEvent) -> None:
        if event.kind == TOOL_START:
            shown = next((value for value in event.input.values() if isinstance(value, str) and value.strip()), "")
            shown = " ".join(shown.split())
            text = f"{request.definition.name}: {event.name} {shown[:60] + '…' if len(shown) > 60 else shown}"
            emit(TurnEvent(PROGRESS, text=text.rstrip(), name="agent", tool_use_id=request.tool_use_id or ""))

    return forward


def _asker(ask: AskPermission | None, request: RunRequest, cancel: threading.Event) -> AskPermission | None:
    """The run's questions, through the parent's `ask`, saying which run asks and tied to its `cancel`."""
    if ask is None:
        return None
    origin = f"sub-agent {request.definition.name} {request.agent_id}"

    def asked(question: PermissionRequest) -> str:
        question.origin, question.cancel = origin, cancel
        return ask(question)

    return asked


def failure_end(message: str, started: float, result: TurnResult | None = None) -> RunEnd:
    """The end of a run that failed with `message` (what it did before, from `result`)."""
    return RunEnd("failed", _outcome(result, f"Error: {message}", "run_error", started), message)


def _outcome(result: TurnResult | None, text: str, stop: str, started: float) -> Outcome:
    usage = result.usage if result is not None else {}
    tokens = tuple(int(usage.get(key, 0)) for key in ("inputTokens", "outputTokens", "cacheReadTokens",
                                                       "cacheWriteTokens"))
    return Outcome(final_text=text, stop_reason=stop, tokens=(tokens[0], tokens[1], tokens[2], tokens[3]),
                   tool_uses=result.tool_calls if result is not None else 0,
                   turns=result.model_calls if result is not None else 0,
                   duration_ms=int((time.monotonic() - started) * 1000))


def execute(context: RunContext, request: RunRequest, cancel: threading.Event) -> RunEnd:
    """Runs `request` to its end (see the module docstring).

    Raises:
        OSError: the run's files could not be made (the caller reports the run failed).
    """
    started = time.monotonic()
    definition = request.definition
    mode, may_ask = run_permission(definition, context.permission_mode)
    pad = context.space.scratchpad
    gate = Policy(context.cwd, settings=context.project.settings(), mode=mode,
                  ask=_asker(context.ask, request, cancel) if may_ask else None, grants=context.grants,
                  notify=context.notify, scratchpad=pad.path if pad is not None else None)
    model = request.model
    effort = definition.reasoning_effort or context.effort
    with SubagentTranscript(context.files, str(context.cwd), agent_type=definition.name,
                            description=request.description, tool_use_id=request.tool_use_id,
                            agent_id=request.agent_id, background=request.background, model=model.model_id,
                            persist=context.persist) as run:
        conversation = Conversation(run.writer, model, context.cwd, [], context.checkpoints,
                                    effort=effort if isinstance(model, Reasons) else None, gate=gate, cancel=cancel,
                                    on_event=_progress(context, request),
                                    tool_env=context.space.env, tool_guard=context.space.guard,
                                    system=system_for(definition, context), tools=tool_specs_for(request.grant),
                                    max_steps=definition.turn_limit, opens_checkpoint=False, commit_steps=True)
        try:
            result = conversation.run_turn(request.prompt)
        except TurnInterrupted:  # killed before its first step: its prompt and the interrupt marker are its record
            for text in (request.prompt, INTERRUPTED_BY_USER):
                run.writer.append_message({"role": "user", "content": [{"type": "text", "text": text}],
                                           "meta": {"messageId": new_uuid()}})
            run.finish("killed")
            return RunEnd("killed", _outcome(None, "", "interrupted", started))
        except Exception as error:  # the run recorded it (`Error: …`) and committed what it had
            message = str(error) or type(error).__name__
            run.finish("failed", error=message)
            return failure_end(message, started)
        for notice in result.notices:
            context.notify(f"sub-agent {request.agent_id}: {notice}")
        if result.interrupted:
            run.finish("killed")
            return RunEnd("killed", _outcome(result, result.text, "interrupted", started))
        if result.step_limit:
            run.finish("max_turns")
            return RunEnd("max_turns", _outcome(result, result.text, "max_turns", started))
        run.finish("completed")
        return RunEnd("completed", _outcome(result, result.text, "end_turn", started))
