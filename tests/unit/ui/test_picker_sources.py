"""The picker's sources (Pilot over real files): Ctrl+O cycles Command Code, Claude Code, pi and
all; another agent's rows are tagged; typing filters them by their text too; picking one imports
it (an earlier import is reused) and resumes the import; renaming or deleting one is refused and
its file left as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from commandcode.errors import CommandcodeError
from commandcode.ui.app import ScreenApp
from commandcode.ui.screens.picker import PickerScreen
from commandcode.ui.screens.picker_data import PickerData
from helpers.cli import snapshot
from helpers.session_files import sid, write_claude_session, write_session

CLAUDE_ID = "c1a0de00-0000-4000-8000-000000000002"


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder


@pytest.mark.asyncio
async def test_ctrl_o_cycles_the_sources_and_a_picked_claude_session_is_imported(home: Path, workdir: Path,
                                                                                 claude: Path) -> None:
    write_session(workdir, sid(1), ["our own session"], when="2026-01-01T00:00:00.000Z")
    write_claude_session(claude, workdir, CLAUDE_ID, "a question about the zeppelin", "an answer")
    before = snapshot(claude)
    data = PickerData(workdir)
    screen = PickerScreen(data)
    app = ScreenApp(screen)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert [row.summary.id for row in screen.shown] == [sid(1)]
        seen = []
        for _ in range(4):
            await pilot.press("ctrl+o")
            await app.workers.wait_for_complete()
            await pilot.pause()
            seen.append((data.source, [row.summary.id for row in screen.shown]))
        assert seen == [("claude", [CLAUDE_ID]), ("pi", []), ("all", [CLAUDE_ID, sid(1)]), ("commandcode", [sid(1)])]
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "source Claude Code" in str(screen.query_one("#status", Static).render())
        for key in "zeppelin":
            await pilot.press(key)
        await pilot.pause()
        assert [row.summary.id for row in screen.shown] == [CLAUDE_ID] and screen.shown[0].snippet
        await pilot.press("enter")
        await pilot.pause()
    picked = app.return_value
    assert picked is not None and data.source_of(picked) == "claude"
    with pytest.raises(CommandcodeError, match="cannot be renamed"):
        data.rename(picked, "new name")
    with pytest.raises(CommandcodeError, match="cannot be deleted"):
        data.delete(picked)
    imported = data.import_picked(picked)
    assert imported.path != picked.path and Path(imported.path).is_file()
    assert imported.first_message == "a question about the zeppelin"
    assert data.import_picked(picked).path == imported.path  # the earlier import, not a second one
    assert snapshot(claude) == before
    assert data.import_picked(imported) is imported  # our own session: resumed as it is
