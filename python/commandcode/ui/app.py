"""Runs one full-screen screen and returns what it dismissed with.

`run_screen(screen)` is how the shell (`Shell.run_screen`) and the CLI (`commandcode tree`,
`rewind REF` without `--to`, `sessions pick`) open a screen. Tests drive the same app with
Textual's Pilot: `async with ScreenApp(screen).run_test() as pilot: ...`.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.screen import Screen


class ScreenApp(App[Any]):
    """An app whose whole life is one screen: it exits with the screen's dismiss value."""

    ENABLE_COMMAND_PALETTE = False  # its ^p hint offered nothing these screens do

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self._first_screen = screen

    def on_mount(self) -> None:
        self.push_screen(self._first_screen, callback=self.exit)


def run_screen(screen: Screen[Any]) -> Any:
    """Runs `screen` in the terminal until it is dismissed; returns its result (None on quit)."""
    return ScreenApp(screen).run()
