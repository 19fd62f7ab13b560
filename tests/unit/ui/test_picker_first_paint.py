"""The picker's first paint reads only a screenful of rows (a SQL `LIMIT`), then loads the whole
list in a worker thread and draws it: the first rows are the head of the full list, the status
line says the list is still loading, and keys pressed meanwhile act on the whole list."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from commandcode.ui.app import ScreenApp
from commandcode.ui.screens import picker
from commandcode.ui.screens.picker import FIRST_PAINT, PickerScreen
from commandcode.ui.screens.picker_data import PickerData
from helpers.session_files import sid, write_session

COUNT = FIRST_PAINT + 15


def _sessions(workdir: Path) -> list[str]:
    for number in range(1, COUNT + 1):
        write_session(workdir, sid(number), [f"prompt number {number}"],
                      when=f"2026-01-01T{number // 60:02d}:{number % 60:02d}:00.000Z")
    return [sid(number) for number in range(COUNT, 0, -1)]


class _Gated(PickerData):
    """Records each listing's limit; the whole list waits until the test lets it go."""

    def __init__(self, cwd: Path) -> None:
        super().__init__(cwd)
        self.limits: list[int | None] = []
        import threading

        self.gate = threading.Event()

    def _list(self, limit: int | None):  # type: ignore[no-untyped-def]
        self.limits.append(limit)
        if limit is None:
            assert self.gate.wait(30), "the test never let the full listing go"
        return super()._list(limit)


@pytest.mark.asyncio
async def test_the_first_paint_is_a_screenful_then_the_whole_list(home: Path, workdir: Path) -> None:
    newest_first = _sessions(workdir)
    data = _Gated(workdir)
    screen = PickerScreen(data)
    app = ScreenApp(screen)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert data.limits[0] == FIRST_PAINT
        assert [row.summary.id for row in screen.shown] == newest_first[:FIRST_PAINT]
        assert "loading" in str(screen.query_one("#status", Static).render())
        assert not screen.complete
        data.gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.complete
        assert [row.summary.id for row in screen.shown] == newest_first
        status = str(screen.query_one("#status", Static).render())
        assert f"{COUNT} session(s)" in status and "loading" not in status
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_value is None


@pytest.mark.asyncio
async def test_typing_before_the_list_is_loaded_filters_the_whole_list(home: Path, workdir: Path) -> None:
    _sessions(workdir)
    data = _Gated(workdir)
    screen = PickerScreen(data)
    app = ScreenApp(screen)
    async with app.run_test() as pilot:
        await pilot.pause()
        data.gate.set()  # the filter waits for the whole list, never filters only the first rows
        for key in "number 3":
            await pilot.press(key if key != " " else "space")
        await app.workers.wait_for_complete()
        await pilot.pause()
        oldest_match = sid(3)  # far below the first screenful
        assert oldest_match in [row.summary.id for row in screen.shown]
        await pilot.press("escape")
        await pilot.pause()


@pytest.mark.asyncio
async def test_leaving_before_the_list_is_loaded_is_clean(home: Path, workdir: Path) -> None:
    _sessions(workdir)
    data = _Gated(workdir)
    app = ScreenApp(PickerScreen(data))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("enter")  # resumes the newest, while the full list is still loading
        await pilot.pause()
        data.gate.set()
    assert app.return_value is not None and app.return_value.id == sid(COUNT)
    assert picker.SHOWN >= FIRST_PAINT


@pytest.mark.asyncio
async def test_the_list_arrives_while_a_question_is_open(home: Path, workdir: Path) -> None:
    newest_first = _sessions(workdir)
    data = _Gated(workdir)
    screen = PickerScreen(data)
    app = ScreenApp(screen)
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("ctrl+d")  # "delete …?" is open while the whole list loads
        await pilot.pause()
        data.gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert screen.complete and [row.summary.id for row in screen.shown] == newest_first
        await pilot.press("escape")
        await pilot.pause()


def test_the_first_screenful_is_read_while_the_app_starts(home: Path, workdir: Path) -> None:
    """The screen starts reading its first screenful when it is made (`PickerData.prefetch`):
    mounted, it draws those rows, the same as a direct read, without reading them again; a
    prefetch of another count, or one whose read failed, is read again directly."""
    expected = _sessions(workdir)[:FIRST_PAINT]
    direct = [row.summary.id for row in PickerData(workdir).first_rows(FIRST_PAINT)]
    assert direct == expected
    reads: list[int | None] = []

    class Counted(PickerData):
        def _list(self, limit: int | None):  # type: ignore[no-untyped-def]
            reads.append(limit)
            return super()._list(limit)

    data = Counted(workdir)
    data.prefetch(FIRST_PAINT)
    assert [row.summary.id for row in data.first_rows(FIRST_PAINT)] == expected
    assert reads == [FIRST_PAINT]  # read once, in the prefetch's thread
    reads.clear()
    other = Counted(workdir)
    other.prefetch(5)
    assert [row.summary.id for row in other.first_rows(FIRST_PAINT)] == expected
    assert reads == [5, FIRST_PAINT]

    class Failing(PickerData):
        failures = 1

        def _list(self, limit: int | None):  # type: ignore[no-untyped-def]
            if Failing.failures:
                Failing.failures -= 1
                raise OSError("the first read fails")
            return super()._list(limit)

    failing = Failing(workdir)
    failing.prefetch(FIRST_PAINT)
    assert [row.summary.id for row in failing.first_rows(FIRST_PAINT)] == expected
