"""The shell's Up/Down and Ctrl+R history: the real CLI's `history.jsonl` (format §12).

It loads the newest 100 prompts at start, as the real CLI does, and records every line the user
enters, slash commands included, through `sessions.history.record_prompt` (which honours
`COMMANDCODE_SKIP_PROMPT_HISTORY`)."""

from __future__ import annotations

from collections.abc import Iterable

from prompt_toolkit.history import History

from ..sessions.history import recent_prompts, record_prompt


class PromptHistory(History):
    """`history.jsonl` as prompt_toolkit's history."""

    def load_history_strings(self) -> Iterable[str]:
        return list(reversed(recent_prompts()))  # prompt_toolkit wants the newest first

    def store_string(self, string: str) -> None:
        if string.strip():
            record_prompt(string)
