"""Switching a session's model and effort, as the real CLI records it: a `model_change` entry
(`model`: `provider/model`) with `meta.model` and `meta.modelProvider`, or an `effort_change`
entry (`effort`). A saved session commits the entry at once (it survives a quit before the next
turn); a new one writes it with its first turn. The effort also goes on each later assistant
entry and, for a provider model that reasons, into its requests (`reasoning_effort`).
`adopt_model` picks the model of a session opened without one (a resume goes on with its own).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from .providers.base import Model
from .providers.registry import model_provider, resolve_model

if TYPE_CHECKING:
    from .runtime import AgentSession

EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")


def switch_model(agent: AgentSession, name: str) -> Model:
    """The model `name` addresses, recorded in `agent`'s session (see the module docstring)."""
    model = resolve_model(name, warn=agent.notify)
    if agent.effort is not None and hasattr(model, "effort"):
        model.effort = agent.effort
    writer = agent._require_writer()
    writer.append_entry("model_change", {"model": model.model_id})
    if writer.exists_on_disk:
        writer.commit()
    agent._pending_meta.update({"model": model.model_id, "modelProvider": model_provider(model.model_id)})
    agent._patch_meta(writer)
    return model


def switch_effort(agent: AgentSession, level: str) -> str:
    """`level`, checked and recorded in `agent`'s session."""
    cleaned = level.strip().lower()
    if cleaned not in EFFORT_LEVELS:
        raise UsageError(f"unknown effort {level!r}", hint=f"use one of: {', '.join(EFFORT_LEVELS)}")
    if cleaned == agent.effort:
        return cleaned  # no change, no entry (`--effort high` on every -p run of a high session)
    writer = agent._require_writer()
    writer.append_entry("effort_change", {"effort": cleaned})
    if writer.exists_on_disk:
        writer.commit()
    if hasattr(agent.model, "effort"):
        agent.model.effort = cleaned
    return cleaned


def adopt_model(agent: AgentSession, recorded_model: str | None, recorded_effort: str | None) -> None:
    """When the caller named no model: a resumed session goes on with the model it recorded
    (its last `model_change`, or a later assistant's `model`), a new one starts with
    `config.json`'s (else the offline model); a recorded model this machine cannot reach any
    more (a provider removed from providers.json) falls back to the offline model with a notice.
    A recorded effort is kept unless one was set."""
    if agent.effort is None and recorded_effort in EFFORT_LEVELS:
        agent.effort = recorded_effort
    if agent._model_given:
        return
    if recorded_model is None:  # a new session: config.json's model (a wrong one is the user's to fix)
        agent.model = resolve_model(None, warn=agent.notify)
        _carry_effort(agent)
        return
    try:
        agent.model = resolve_model(recorded_model, warn=agent.notify)
    except UsageError as error:
        agent.notify(f"the session's model {recorded_model} is not available ({error}); using the offline model")
        agent.model = resolve_model("offline")
    _carry_effort(agent)


def _carry_effort(agent: AgentSession) -> None:
    if agent.effort is not None and hasattr(agent.model, "effort"):
        agent.model.effort = agent.effort


def settings_mode(cwd: Path) -> str:
    """The settings' `permissions.defaultMode` (`default` when unset or unknown, or when a
    settings file is malformed: the turn's permission check reports that file itself)."""
    from ..config.settings import load_settings
    from ..errors import SettingsError
    from .permissions import MODES

    try:
        mode = load_settings(cwd).permissions_default_mode
    except SettingsError:
        return "default"
    return mode if mode in MODES else "default"
