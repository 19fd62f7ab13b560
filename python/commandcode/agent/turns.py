"""`SessionTurns`: running a session's turns, a collaborator of `AgentSession` taking the handle,
the model selection and the rewinds (which finish a restore a crash interrupted before the
checkpoint hook loads). It owns what a turn needs besides the session's files: the permission
gate's inputs (`ask_permission`, `grants`), the tool space (scratchpad and worktree guard), the
checkpoint hook, the compaction (`agent/compaction_hooks.py`), the trace id and the turn count,
and the session's sub-agent runs (`agent/subagents/`: each turn is offered `agent` and
`agent_output`; `on_subagent_end` hears of each run's end, `wait_background_subagents` waits for
the background ones, `stop_subagents` ends the runs still going when the session closes).
The turn itself is `agent/turn.py`'s `Conversation`; this runs it, commits it and patches the meta.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..checkpoints.manager import CheckpointManager
from ..errors import CheckpointError, CommandcodeError
from ..sessions.history import record_prompt
from .compaction_hooks import SessionCompaction
from .events import OnEvent
from .handle import SessionHandle
from .model_switch import ModelSelection
from .permissions import AskPermission, Grants, Policy
from .session_rewinds import SessionRewinds
from .system_prompt import system_prompt
from .turn import Conversation, TurnResult

if TYPE_CHECKING:
    from ..workspace.session_space import ToolSpace
    from .subagents.runner import Run, SubagentRunner
    from .subagents.tools import SpawnTools


def preload() -> None:
    """Imports what a turn loads when it starts (its tool space, its spawn tools, its trace id),
    ahead of it: a `-c` launch does this while the catalog's warm-up reads the transcripts, so
    none of it is left between the session's resolution and its reply."""
    from ..workspace import session_space  # noqa: F401
    from . import tracing  # noqa: F401
    from .subagents import wiring  # noqa: F401


class SessionTurns:
    """The turns of one session (see the module docstring). No `ask_permission` means headless
    (`-p`) rules; `grants` are the session's grants (a fresh set by default)."""

    def __init__(self, handle: SessionHandle, models: ModelSelection, rewinds: SessionRewinds, *,
                 ask_permission: AskPermission | None = None, grants: Grants | None = None) -> None:
        self._handle = handle
        self._models = models
        self._rewinds = rewinds
        self.ask_permission = ask_permission
        self.grants = grants if grants is not None else Grants()
        self.compaction = SessionCompaction(handle, models, self.scratchpad_manifest)
        self.trace_id: str | None = None  # the W3C trace id of the running (else the last) turn
        self.turns_run = 0  # turns this object ran
        self._warned: set[str] = set()
        self._checkpoints_loaded = False
        self._space: ToolSpace | None = None
        self._subagents: SubagentRunner | None = None
        self.on_subagent_end: Callable[[Run], None] | None = None  # the shell's notices (from the run's thread)

    def wire(self, ask_permission: AskPermission | None, grants: Grants | None = None) -> None:
        """Who is asked for permission (a shell's prompt; None: headless rules) and, when given,
        the grants to keep (a `/fork` in the same shell keeps the session's grants)."""
        self.ask_permission = ask_permission
        if grants is not None:
            self.grants = grants

    def checkpoints(self) -> CheckpointManager | None:
        """The checkpoint hook of the turns: the session's manager, loaded once (after finishing
        a restore a crash interrupted); `None` when nothing is persisted, or, with a notice, when
        the checkpoints file cannot be read (a FIFO or folder in its place): the turn runs, its
        edits are not checkpointed, and that file is left as it is (like the disk-low pause)."""
        handle = self._handle
        if not self._checkpoints_loaded:
            self._checkpoints_loaded = True
            if handle.persist:
                try:
                    self._rewinds.recover_interrupted_restore()
                    manager = CheckpointManager.for_session(handle.files, handle.cwd, project=handle.project)
                    handle.attach_manager(manager)
                    manager.track_shell(handle.notify)
                except CheckpointError as error:
                    handle.notify(f"{error}; this turn's edits are not checkpointed")
        return handle.manager

    def run_turn(self, prompt: str, *, on_event: OnEvent | None = None, cancel: threading.Event | None = None,
                 record_history: bool = False) -> TurnResult:
        """Runs one prompt to completion, commits it and patches the meta; `on_event` gets the
        turn's `TurnEvent`s live. The prompt goes to `~/.commandcode/history.jsonl` only with
        `record_history` (the interactive shell's choice; `-p` never writes it).

        Raises:
            TurnInterrupted: `cancel` was set before the turn started; nothing was written (set
                while it runs, the turn is committed as far as it got: `result.interrupted`).
            CommandcodeError: the turn failed (what it produced, and an `Error: …` message, were
                recorded in the session first); a failure of ours keeps its own class.
        """
        from .tracing import new_trace_id

        handle, models = self._handle, self._models
        writer = handle.writer()
        if handle.persist and record_history:  # on submission: a failed or interrupted prompt is recalled too
            record_prompt(prompt)
        self.trace_id = new_trace_id()
        commits_before = writer.mark()[0]
        settings = handle.project.refresh().settings()  # reread at each turn; a malformed file refuses it in one line
        space = self.tool_space()
        gate = Policy(handle.cwd, settings=settings, mode=models.permission_mode, ask=self.ask_permission, grants=self.grants,
                      notify=handle.notify, scratchpad=space.scratchpad.path if space.scratchpad else None)
        for warning in set(gate.warnings) - self._warned:  # a wrong-typed rule: once per session
            self._warned.add(warning)
            handle.notify(warning)
        if not handle.is_new and self.turns_run == 0:  # a resumed compacted context: its scratchpad manifest
            self.compaction.put_back_manifest_on_resume()
        self.turns_run += 1
        self.compaction.auto(on_event)
        manager = self.checkpoints()
        spawn = self._spawn_tools(space, gate.mode, manager, on_event)
        conversation = Conversation(writer, models.model, handle.cwd, handle.messages, spawn.checkpoints,
                                    effort=models.effort, gate=gate, on_event=on_event, cancel=cancel,
                                    entry_ids=handle.entry_ids, view=self.compaction.view(), tool_env=space.env,
                                    tool_guard=space.guard, system=system_prompt(str(handle.cwd), space.prompt()),
                                    tools=spawn.specs(), handlers=spawn.handlers(), before_step=spawn.before_step)
        try:
            result = conversation.run_turn(prompt)
        except CommandcodeError:
            raise
        except OSError as error:  # a full disk: the transcript was cut back to its last commit
            where = f" ({error.filename})" if error.filename else ""
            raise CommandcodeError(f"the turn failed: {error.strerror or error}{where}") from error
        except Exception as error:  # the turn recorded it (`Error: …`); the caller gets one line, not a traceback
            raise CommandcodeError(f"the turn failed: {str(error) or type(error).__name__}") from error
        finally:  # a failed or interrupted turn that reached disk is labelled too
            handle.patch_meta(trace_id=self.trace_id if writer.mark()[0] > commits_before else None)
        return result

    # ----------------------------------------------------------------------------------------
    # Sub-agents (agent/subagents/)

    def _spawn_tools(self, space: ToolSpace, mode: str, manager: CheckpointManager | None,
                     on_event: OnEvent | None) -> SpawnTools:
        from .subagents.wiring import turn_spawn_tools

        handle, models = self._handle, self._models
        return turn_spawn_tools(self._runner, session=handle, model=models.model, effort=models.effort,
                                permission_mode=mode, ask=self.ask_permission, grants=self.grants,
                                notify=handle.notify, space=space, manager=manager, on_event=on_event)

    def _runner(self) -> SubagentRunner:
        """The session's sub-agent runner, made at its first run (a turn that starts none never
        loads the run machinery)."""
        if self._subagents is None:
            from .subagents.runner import SubagentRunner

            self._subagents = SubagentRunner(on_end=self._subagent_ended)
        return self._subagents

    def _subagent_ended(self, run: Run) -> None:
        listener = self.on_subagent_end
        if listener is not None:
            listener(run)

    def wait_background_subagents(self, on_end: Callable[[Run], None],
                                  on_wait: Callable[[list[Run]], None] | None = None) -> list[Run]:
        """Waits for the background runs still going (`SubagentRunner.wait_background`: `on_end`
        hears of each run whose end nobody was told of; those are returned)."""
        return self._subagents.wait_background(on_end, on_wait) if self._subagents is not None else []

    def running_subagents(self) -> list[str]:
        """The ids of the sub-agent runs still going."""
        return [run.agent_id for run in self._subagents.running()] if self._subagents is not None else []

    def stop_subagents(self) -> list[str]:
        """Stops the sub-agent runs still going (each commits as far as it got, `killed`) and
        returns their ids; none when no run was ever started."""
        return self._subagents.stop_all() if self._subagents is not None else []

    # ----------------------------------------------------------------------------------------
    # Workspace: the scratchpad and the worktree the tools work in (workspace/session_space.py)

    def tool_space(self) -> ToolSpace:
        """The session's scratchpad (provisioned once; `$COMMANDCODE_SCRATCHPAD`, its prompt lines)
        and the worktree guard every tool call passes."""
        if self._space is None:
            from ..workspace.session_space import prepare

            handle = self._handle
            self._space = prepare(handle.session_id, handle.project, handle.notify)
        return self._space

    def scratchpad_manifest(self) -> str | None:
        """What is in the scratchpad (names, sizes, times; bounded), for the context after a compaction."""
        from ..workspace.scratchpad import scratchpad_manifest

        pad = self.tool_space().scratchpad
        return scratchpad_manifest(pad.path if pad is not None else None)
