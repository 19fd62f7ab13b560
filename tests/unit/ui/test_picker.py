"""The resume picker, driven by Textual's Pilot over real sessions on disk: Enter resumes, Escape
leaves, typing filters by name and full text (with the snippet), scopes widen to worktrees and
every project, headless and branch filters, rename in place (unique names), delete (asks first,
removes the sidecars and file history, never the current session), forks labelled."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from commandcode.config.paths import file_history_dir, project_dir
from commandcode.ui.app import ScreenApp
from commandcode.ui.screens.picker import PickerScreen
from commandcode.ui.screens.picker_data import PickerData
from helpers.session_files import sid, write_session


def _world(workdir: Path) -> None:
    write_session(workdir, sid(1), ["refactor the parser"], meta={"title": "Parser work", "gitBranch": "main"},
                  when="2026-01-01T00:00:00.000Z")
    write_session(workdir, sid(2), ["write the docs", "mention the zeppelin"], meta={"gitBranch": "docs"},
                  when="2026-01-02T00:00:00.000Z")
    write_session(workdir, sid(3), ["headless run"], meta={"entrypoint": "print"}, when="2026-01-03T00:00:00.000Z")
    write_session(workdir, sid(4), ["forked"], meta={"parentSessionId": sid(1)}, when="2026-01-04T00:00:00.000Z")


def _ids(screen: PickerScreen) -> list[str]:
    return [row.summary.id for row in screen.shown]


async def _run(data: PickerData, keys: list[str]) -> tuple[object, PickerScreen]:
    screen = PickerScreen(data)
    app = ScreenApp(screen)
    async with app.run_test() as pilot:
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        seen = list(_ids(screen))
        await pilot.press("escape")
        await pilot.pause()
    screen.seen = seen  # type: ignore[attr-defined]
    return app.return_value, screen


@pytest.mark.asyncio
async def test_enter_resumes_the_highlighted_session_and_escape_leaves(home: Path, workdir: Path) -> None:
    _world(workdir)
    screen = PickerScreen(PickerData(workdir))
    app = ScreenApp(screen)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert _ids(screen) == [sid(4), sid(2), sid(1)]  # newest first, headless hidden
        assert screen.shown[0].summary.lineage == "fork of Parser work"
        await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
    assert app.return_value is not None and app.return_value.id == sid(2)
    left, _ = await _run(PickerData(workdir), [])
    assert left is None


@pytest.mark.asyncio
async def test_typing_filters_by_name_and_full_text_with_a_snippet(home: Path, workdir: Path) -> None:
    _world(workdir)
    screen = PickerScreen(PickerData(workdir))
    async with ScreenApp(screen).run_test() as pilot:
        await pilot.pause()
        for key in "zeppelin":
            await pilot.press(key)
        await pilot.pause()
        assert _ids(screen) == [sid(2)]
        row = screen.shown[0]
        assert row.snippet is not None and "zeppelin" in row.snippet
        assert any(row.snippet[start:end] == "zeppelin" for start, end in row.spans)
        for _ in "zeppelin":
            await pilot.press("backspace")
        for key in "parser w":
            await pilot.press(key)
        await pilot.pause()
        assert _ids(screen) == [sid(1)]  # by name
        preview = str(screen.query_one("#preview").render())
        assert "Parser work" in preview and "first prompt" in preview


@pytest.mark.asyncio
async def test_headless_branch_sort_and_scope_keys(home: Path, workdir: Path, tmp_path: Path) -> None:
    _world(workdir)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_session(elsewhere, sid(9), ["far away"], when="2026-01-09T00:00:00.000Z")
    screen = PickerScreen(PickerData(workdir))
    async with ScreenApp(screen).run_test() as pilot:
        await pilot.pause()
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert sid(3) in _ids(screen)
        await pilot.press("ctrl+t", "ctrl+b")
        await pilot.pause()
        assert screen.data.branch == "docs" and _ids(screen) == [sid(2)]
        await pilot.press("ctrl+b", "ctrl+b")
        await pilot.pause()
        assert screen.data.branch is None
        await pilot.press("ctrl+a")
        await pilot.pause()
        assert _ids(screen)[0] == sid(9)
        await pilot.press("ctrl+a", "ctrl+s")
        await pilot.pause()
        assert screen.data.sort == "relevance" and sid(9) not in _ids(screen)


@pytest.mark.asyncio
async def test_ctrl_w_widens_to_every_worktree(home: Path, tmp_path: Path) -> None:
    main = tmp_path / "repo"
    main.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(main)], check=True)
    subprocess.run([*git, "-C", str(main), "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    other = tmp_path / "repo-feature"
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", "-b", "feature", str(other)], check=True)
    write_session(main, sid(1), ["in main"])
    write_session(other.resolve(), sid(2), ["in the feature worktree"])
    screen = PickerScreen(PickerData(main))
    async with ScreenApp(screen).run_test() as pilot:
        await pilot.pause()
        assert _ids(screen) == [sid(1)]
        await pilot.press("ctrl+w")
        await pilot.pause()
        assert set(_ids(screen)) == {sid(1), sid(2)}


@pytest.mark.asyncio
async def test_rename_in_place_keeps_names_unique(home: Path, workdir: Path) -> None:
    _world(workdir)
    screen = PickerScreen(PickerData(workdir))
    async with ScreenApp(screen).run_test() as pilot:
        await pilot.pause()
        await pilot.press("down")  # sid(2), unnamed
        await pilot.press("ctrl+r")
        await pilot.pause()
        for key in "parser work":
            await pilot.press(key if key != " " else "space")
        await pilot.press("enter")
        await pilot.pause()
        transcript = project_dir(workdir) / f"{sid(2)}.jsonl"
        assert "session_info" not in transcript.read_text()  # refused: Parser work is taken
        await pilot.press("ctrl+r")
        await pilot.pause()
        for key in "-docs":
            await pilot.press(key)
        await pilot.press("enter")
        await pilot.pause()
        renamed = next(row.summary for row in screen.shown if row.summary.id == sid(2))
        assert renamed.name == "-docs" and screen.selected().summary.id == sid(2)  # still highlighted
    meta = json.loads((project_dir(workdir) / f"{sid(2)}.meta.json").read_text())
    assert meta["title"] == "-docs" and meta["userRenamed"] is True and meta["gitBranch"] == "docs"
    assert json.loads(transcript.read_text().splitlines()[-1])["type"] == "session_info"


@pytest.mark.asyncio
async def test_delete_asks_first_removes_everything_and_spares_the_current_session(
        home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no `trash`: removed
    _world(workdir)
    folder = project_dir(workdir)
    (folder / f"{sid(2)}.checkpoints.jsonl").write_text("")
    history = file_history_dir(sid(2))
    history.mkdir(parents=True)
    (history / ("0" * 64)).write_text("backup")
    screen = PickerScreen(PickerData(workdir, current_id=sid(4)))
    async with ScreenApp(screen).run_test() as pilot:
        await pilot.pause()
        await pilot.press("ctrl+d")  # the current session: refused
        await pilot.pause()
        assert (folder / f"{sid(4)}.jsonl").exists()
        await pilot.press("down", "ctrl+d")
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert (folder / f"{sid(2)}.jsonl").exists()
        await pilot.press("ctrl+d")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert _ids(screen) == [sid(4), sid(1)]
    assert not any(path.name.startswith(sid(2)) for path in folder.iterdir())
    assert not history.exists()
    assert (folder / f"{sid(4)}.jsonl").exists() and (folder / f"{sid(1)}.jsonl").exists()


def test_delete_goes_to_the_trash_when_it_is_installed(home: Path, workdir: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A `trash` command on PATH takes the files (here a stand-in that records and moves them)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    can = tmp_path / "can"
    can.mkdir()
    (bin_dir / "trash").write_text(f"#!/bin/sh\n[ \"$1\" = -- ] && shift\nmv \"$@\" {can}/\n")
    (bin_dir / "trash").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    _world(workdir)
    data = PickerData(workdir)
    summary = next(row.summary for row in data.rows() if row.summary.id == sid(2))
    assert data.delete(summary) is True
    assert (can / f"{sid(2)}.jsonl").is_file()
    assert not (project_dir(workdir) / f"{sid(2)}.jsonl").exists()
