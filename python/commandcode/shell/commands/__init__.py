"""The slash commands, one module per command or command group.

Each module here exposes `COMMANDS: list[SlashCommand]` (see `shell/slash.py`); `slash.registry()`
finds them by listing this package, so adding a command is adding a module.
"""
