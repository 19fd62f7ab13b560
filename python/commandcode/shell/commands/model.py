"""`/model [provider/model]` and `/effort [LEVEL]`: show or switch the session's model and
reasoning effort through `agent.models.set_model` / `set_effort` (which write the
`model_change` / `effort_change` entries and update the meta)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..slash import Shell, SlashCommand

if TYPE_CHECKING:
    from ...agent.runtime import AgentSession


def _show_or_set(label: str, shown: Callable[[AgentSession], str], change: Callable[[AgentSession, str], object],
                 ) -> Callable[[Shell, str], None]:
    """A `/label [VALUE]` runner: no value shows the session's, a value changes it (the
    session's setter raises what it refuses) and says what it is now."""
    def run(shell: Shell, args: str) -> None:
        value = args.strip()
        if value:
            change(shell.agent, value)
        (shell.notice if value else shell.print)(f"{label}: {shown(shell.agent)}")

    return run


_model = _show_or_set("model", lambda agent: agent.models.model.model_id, lambda agent, name: agent.models.set_model(name))
_effort = _show_or_set("effort", lambda agent: agent.models.effort or "(the model default)",
                       lambda agent, level: agent.models.set_effort(level))


def _complete_model(shell: Shell, prefix: str) -> list[str]:
    """The built-in model and every `provider/model` of providers.json."""
    from ...agent.providers.config import load_providers

    names = ["offline", *sorted(f"{provider_id}/{model}" for provider_id, provider in load_providers().items()
                                for model in provider.models)]
    return [name for name in names if name.startswith(prefix.strip())]


def _complete_effort(shell: Shell, prefix: str) -> list[str]:
    from ...agent.model_switch import EFFORT_LEVELS

    return [level for level in EFFORT_LEVELS if level.startswith(prefix.strip())]


COMMANDS = [
    SlashCommand("model", _model, "Show or switch the model (provider/model)",
                 help="/model shows the session's model; /model PROVIDER/MODEL switches to it (a model_change "
                      "entry, and the meta's model). Models come from providers.json; the built-in one is offline.",
                 complete=_complete_model),
    SlashCommand("effort", _effort, "Show or set the reasoning effort",
                 help="/effort shows the reasoning effort; /effort LEVEL sets it for the next turns (an "
                      "effort_change entry) when the model offers that level.", complete=_complete_effort),
]
