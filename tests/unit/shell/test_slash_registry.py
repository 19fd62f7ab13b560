"""The slash-command registry: every command module's names are unique and documented."""

from __future__ import annotations

from commandcode.shell.slash import SlashCommand, registry


def test_every_registered_name_is_a_documented_command() -> None:
    commands = registry()
    for key, command in commands.items():
        assert isinstance(command, SlashCommand)
        assert key in (command.name, *command.aliases)
        assert command.summary.strip(), f"/{command.name} has no summary"
        assert key == key.strip().lower() and " " not in key and not key.startswith("/")
