"""Giving a parent turn its spawn tools: `turn_spawn_tools(...)` builds the `SpawnTools` of one
turn from the session's parts (kept here so `agent/turns.py` only passes them on).

A run's `RunContext` is the parent's at the moment it starts: the session's files and working
directory, the turn's model, effort and effective permission mode, the session's project
context (whose settings the turn read: a run's permission rules are the turn's, not read
again), the session's grants, its tool space and checkpoint. Who answers a run's permission
question: the parent's asker, for a foreground run and a background one alike (the shell queues
it and asks it at the prompt or in the turn, one question at a time; a question whose run is
stopped is withdrawn); nobody in `-p` (headless rules refuse what would be asked, as for the
parent).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..agents.registry import load_agents
from ..events import OnEvent
from ..permissions import AskPermission, Grants, PermissionAnswer, PermissionRequest
from ..providers.base import Model
from ..providers.registry import resolve_model
from .checkpoint_view import SubagentCheckpoints
from .tools import SpawnTools

if TYPE_CHECKING:
    from ...checkpoints.manager import CheckpointManager
    from ...workspace.session_space import ToolSpace
    from ..handle import SessionHandle
    from .run import RunContext
    from .runner import SubagentRunner


def _one_at_a_time(ask: AskPermission) -> AskPermission:
    """`ask`, one question at a time; a question whose run is stopped while it waits its turn is
    denied without being asked."""
    lock = threading.Lock()

    def asked(request: PermissionRequest) -> str:
        while not lock.acquire(timeout=0.1):
            if request.cancel is not None and request.cancel.is_set():
                return PermissionAnswer.DENY
        try:
            return ask(request)
        finally:
            lock.release()

    return asked


def turn_spawn_tools(runner: Callable[[], SubagentRunner], *, session: SessionHandle, model: Model, effort: str | None,
                     permission_mode: str, ask: AskPermission | None, grants: Grants,
                     notify: Callable[[str], None], space: ToolSpace,
                     manager: CheckpointManager | None, on_event: OnEvent | None = None) -> SpawnTools:
    """The spawn tools of one parent turn (see the module docstring): `session` gives the files,
    working directory, persistence and project context; its `checkpoints` are the session's
    manager (safe for the parent's turn and its runs at once). `runner()` is the session's runner,
    made at the first run. The agents are loaded again for
    each turn (an agent file added mid-session is callable at once); their warning lines go to
    `notify` once per session."""
    files, cwd, persist, project = session.files, session.cwd, session.persist, session.project
    registry = load_agents(cwd)
    for warning in registry.warnings:
        runner().warn_once(warning, notify)
    checkpoints = SubagentCheckpoints(manager) if manager is not None else None
    run_ask = _one_at_a_time(ask) if ask is not None else None

    def context(background: bool) -> RunContext:
        from .run import RunContext

        return RunContext(files=files, cwd=cwd, persist=persist, model=model, effort=effort,
                          permission_mode=permission_mode, project=project, ask=run_ask,
                          grants=grants, notify=notify, space=space, checkpoints=checkpoints,
                          progress=None if background else on_event)

    def resolve(name: str) -> Model:
        return resolve_model(name, warn=notify)

    return SpawnTools(runner, registry, context, resolve, manager)
