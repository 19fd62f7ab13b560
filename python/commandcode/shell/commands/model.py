"""`/model [provider/model]` and `/effort [LEVEL]`: show or switch the session's model and
reasoning effort through `AgentSession.set_model` / `set_effort` (which write the
`model_change` / `effort_change` entries and update the meta)."""

from __future__ import annotations

from ..slash import Shell, SlashCommand


def _model(shell: Shell, args: str) -> None:
    agent = shell.agent
    reference = args.strip()
    if not reference:
        shell.print(f"model: {agent.model.model_id}")
        return
    agent.set_model(reference)
    shell.notice(f"model: {agent.model.model_id}")


def _effort(shell: Shell, args: str) -> None:
    agent = shell.agent
    level = args.strip()
    if not level:
        shell.print(f"effort: {agent.effort or '(the model default)'}")
        return
    agent.set_effort(level)
    shell.notice(f"effort: {agent.effort}")


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
