"""The `agent` and `agent_output` tools of one parent turn: `SpawnTools`.

`specs()` are what the parent's model is offered (the file and shell tools, `agent` listing the
registered agents, `agent_output`); `handlers()` run the two tools for the `Conversation`, and
`before_step` starts at once every foreground `agent` call of a step that has several, so they
run in parallel (their results are still recorded in call order).

`agent`: checks the call (a string `prompt`; `subagent_type` registered, `general` when omitted;
a model override that resolves; an agent file naming no tool that exists nowhere), each a tool
error the model sees, then starts the run. Foreground, the result is the run's outcome text (a
run that did not complete is an error result); Esc stops the wait and the run goes on in the
background (the result says under which id). Background (`run_in_background`, or the agent's
`background: true`): the launch text with the id, at once.

`agent_output`: `wait` (default; Esc stops the wait), `status`, `kill`; no `agent_id` lists the
background runs; an unknown id is a tool error. A run whose end it reports is `told` (the shell
and `-p` announce only the ends the model has not seen). The texts are the real CLI's
(`agent/agents/results.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ...errors import CommandcodeError, TurnInterrupted
from ..agent_tool_specs import AGENT_OUTPUT_SPEC, AGENT_OUTPUT_TOOL, AGENT_TOOL, agent_tool_spec
from ..agents.registry import AgentRegistry
from ..agents.tool_access import resolve_tools, tool_error
from ..events import OUTPUT, TurnEvent
from ..providers.base import Model, Reasons
from ..tool_specs import TOOL_NAMES, TOOL_SPECS
from ..tools import ToolResult
from ..turn import ToolHandler, TurnCheckpoints

TYPE_CHECKING = False
if TYPE_CHECKING:  # the run machinery loads at the first call of a tool: a turn that spawns nothing never does
    from .run import RunContext, RunRequest
    from .runner import Run, SubagentRunner

ACTIONS = ("wait", "status", "kill")


class WaitStopped(TurnInterrupted):
    """Esc while the parent waited for runs: they go on; `result_text` says under which ids."""

    def __init__(self, result_text: str) -> None:
        super().__init__("interrupted; the sub-agent goes on in the background")
        self.result_text = result_text


def _detached_text(runs: list[Run]) -> str:
    ids = ", ".join(run.agent_id for run in runs)
    if len(runs) > 1:
        return (f"Interrupted by user: stopped waiting. The sub-agents go on in the background (agent_id: {ids}); "
                "use the agent_output tool to wait for or check their results, or to kill them.")
    return (f"Interrupted by user: stopped waiting. The sub-agent goes on in the background (agent_id: {ids}); "
            "use the agent_output tool to wait for or check its result, or to kill it.")


class SpawnTools:
    """The spawn tools of one parent turn (see the module docstring). `runner()` gives the
    session's runner (made at the first run), `context(background)` a run its `RunContext` (a
    background run asks nobody), `resolve(name)` a model by name."""

    def __init__(self, runner: Callable[[], SubagentRunner], registry: AgentRegistry,
                 context: Callable[[bool], RunContext], resolve: Callable[[str], Model],
                 checkpoints: TurnCheckpoints | None = None) -> None:
        self._runner = runner
        self.checkpoints = checkpoints  # the session's checkpoint as the parent's turn reaches it
        self.registry = registry
        self._context = context
        self._resolve = resolve
        self._started: dict[str, Run] = {}  # foreground runs `before_step` started, by tool_use id

    @property
    def runner(self) -> SubagentRunner:
        return self._runner()

    def specs(self) -> list[dict[str, Any]]:
        return [*TOOL_SPECS, agent_tool_spec(list(self.registry.agents.values())), AGENT_OUTPUT_SPEC]

    def handlers(self) -> dict[str, ToolHandler]:
        return {AGENT_TOOL: self.agent, AGENT_OUTPUT_TOOL: self.agent_output}

    # `agent` ------------------------------------------------------------------------------------

    def before_step(self, tool_uses: list[dict[str, Any]]) -> None:
        """Starts the step's foreground `agent` calls now when there are several (parallel)."""
        calls = [use for use in tool_uses if use.get("name") == AGENT_TOOL and isinstance(use.get("input"), dict)
                 and not self._background(use["input"])]
        if len(calls) < 2:
            return
        from .run import RunRequest

        for use in calls:
            try:
                checked = self._check(str(use.get("id")), use["input"])
                if isinstance(checked, RunRequest):
                    self._started[str(use.get("id"))] = self.runner.start(self._context(False), checked)
            except (OSError, RuntimeError):
                continue  # started when its turn comes, which reports why it cannot

    def agent(self, tool_use_id: str, tool_input: dict[str, Any], cancel: threading.Event | None) -> ToolResult:
        from ..agents.results import launched_text, outcome_text

        run = self._started.pop(tool_use_id, None)
        if run is None:
            try:
                checked = self._check(tool_use_id, tool_input)
                if isinstance(checked, ToolResult):
                    return checked
                run = self.runner.start(self._context(checked.background), checked)
            except (OSError, RuntimeError) as error:  # its folder cannot be listed, no thread can start
                reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
                return ToolResult(f"Error: the sub-agent could not start: {reason}", True)
            if checked.background:
                return ToolResult(launched_text(run.agent_id))
        if not run.wait(cancel):
            detached = [run, *self._started.values()]
            self._started.clear()
            for each in detached:
                each.background = True
            raise WaitStopped(_detached_text(detached))
        end = run.end
        assert end is not None  # `done` is set after `end`
        self._show(run, tool_use_id)
        return ToolResult(outcome_text(end.outcome), is_error=end.status != "completed")

    def _show(self, run: Run, tool_use_id: str) -> None:
        """An agent with `showOutput: true`: its final message goes whole to the feed, under the call."""
        emit = self._context(False).progress
        text = run.end.outcome.final_text if run.end is not None else ""
        if run.show_output and emit is not None and text.strip():
            emit(TurnEvent(OUTPUT, text=text, name=AGENT_TOOL, tool_use_id=tool_use_id))

    def _background(self, tool_input: dict[str, Any]) -> bool:
        definition = self.registry.get(str(tool_input.get("subagent_type") or "general"))
        return tool_input.get("run_in_background") is True or (definition is not None and definition.background)

    def _check(self, tool_use_id: str, tool_input: dict[str, Any]) -> RunRequest | ToolResult:
        """The run an `agent` call asks for, or the tool error the model sees."""
        from ...sessions.subagent_writer import new_agent_id
        from ..agents.results import unknown_type_text
        from .run import RunRequest

        prompt = tool_input.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return ToolResult("Error: agent needs a non-empty string `prompt`: the sub-agent's whole task", True)
        kind = tool_input.get("subagent_type")
        name = kind if isinstance(kind, str) and kind.strip() else "general"
        definition = self.registry.get(name)
        if definition is None:
            known = ", ".join(self.registry.names())
            return ToolResult(f"{unknown_type_text(name)} (available: {known})", True)
        grant = resolve_tools(definition, TOOL_NAMES)
        refused = tool_error(definition, grant)
        if refused is not None:
            return ToolResult(refused, True)
        try:
            model = self._model_for(definition, tool_input.get("model"))
        except CommandcodeError as error:
            return ToolResult(f"Error: the sub-agent's model: {error}", True)
        description = tool_input.get("description")
        label = description.strip() if isinstance(description, str) and description.strip() else \
            prompt.strip().splitlines()[0][:60]
        background = self._background(tool_input)
        context = self._context(background)
        return RunRequest(definition=definition, grant=grant, prompt=prompt, description=label,
                          tool_use_id=tool_use_id, agent_id=new_agent_id(context.files, background=background),
                          background=background, model=model)

    def _model_for(self, definition: Any, override: object) -> Model:
        """The run's model: the call's override, else its agent's, else the parent's (a fresh
        one when the agent asks for another reasoning effort, so the parent's stays as it is)."""
        name = override.strip() if isinstance(override, str) and override.strip() else definition.pinned_model
        parent = self._context(False).model
        if name is None and definition.reasoning_effort and isinstance(parent, Reasons):
            name = parent.model_id
        if name is None:
            return parent
        model = self._resolve(name)
        if definition.reasoning_effort and isinstance(model, Reasons):
            model.effort = definition.reasoning_effort
        return model

    # `agent_output` -----------------------------------------------------------------------------

    def agent_output(self, tool_use_id: str, tool_input: dict[str, Any],
                     cancel: threading.Event | None) -> ToolResult:
        del tool_use_id
        from ..agents.results import kill_sent_text, list_text, status_text, unknown_agent_text

        action = tool_input.get("action") or "wait"
        if action not in ACTIONS:
            return ToolResult(f"Error: agent_output's action must be one of {', '.join(ACTIONS)} (got {action!r})",
                              True)
        agent_id = tool_input.get("agent_id")
        if not isinstance(agent_id, str) or not agent_id.strip():
            return ToolResult(list_text([run.record() for run in self.runner.background_runs()]))
        run = self.runner.get(agent_id.strip())
        if run is None:
            return ToolResult(unknown_agent_text(agent_id.strip()), True)
        if action == "kill" and not run.done.is_set():
            self.runner.kill(run)
            return ToolResult(kill_sent_text(run.agent_id))
        if action == "wait" and not run.wait(cancel):
            raise WaitStopped(_detached_text([run]))
        record = run.record()
        run.told = run.told or record.status != "running"  # the model has its end: no notice repeats it
        return ToolResult(status_text(record))
