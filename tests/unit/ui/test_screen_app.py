"""`ui/app.py`: the one-screen app returns what its screen dismissed with."""

from __future__ import annotations

import pytest
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from commandcode.ui.app import ScreenApp


class _Pick(Screen[str]):
    BINDINGS = [Binding("enter", "pick", "Pick"), Binding("escape", "leave", "Leave")]

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static("pick one")

    def action_pick(self) -> None:
        self.dismiss("picked")

    def action_leave(self) -> None:
        self.dismiss(None)


@pytest.mark.asyncio
@pytest.mark.parametrize(("key", "expected"), [("enter", "picked"), ("escape", None)])
async def test_the_app_exits_with_the_screens_result(key: str, expected: str | None) -> None:
    app = ScreenApp(_Pick())
    async with app.run_test() as pilot:
        await pilot.press(key)
        await pilot.pause()
    assert app.return_value == expected
