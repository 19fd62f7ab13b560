"""Tab completion in the shell: slash command names (with their summaries), then each command's
arguments through its `SlashCommand.complete(shell, args)`, which returns whole argument strings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

if TYPE_CHECKING:
    from .slash import Shell, SlashCommand


class SlashCompleter(Completer):
    """Completes `/name` and then `/name ARGS`."""

    def __init__(self, shell: Shell, commands: Callable[[], dict[str, SlashCommand]]) -> None:
        self.shell = shell
        self._commands = commands  # the table, asked for on the first Tab (not before the prompt)

    @property
    def commands(self) -> dict[str, SlashCommand]:
        return self._commands()

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        name, space, args = text[1:].partition(" ")
        if not space:
            for key in sorted(self.commands):
                if key.startswith(name):
                    command = self.commands[key]
                    alias = f" (alias of /{command.name})" if key != command.name else ""
                    yield Completion(f"/{key}", start_position=-len(text), display_meta=command.summary + alias)
            return
        found = self.commands.get(name)
        if found is None or found.complete is None:
            return
        try:
            candidates = found.complete(self.shell, args)
        except Exception:  # a completer must never break the editor
            return
        for candidate in candidates:
            if candidate.startswith(args):
                yield Completion(candidate, start_position=-len(args))
