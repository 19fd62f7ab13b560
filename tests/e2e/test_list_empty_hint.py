"""`sessions list` hides headless `-p` runs; when that leaves nothing to show, it says where
they are instead of suggesting the `-p` that made them."""

from __future__ import annotations

from pathlib import Path

from helpers.cli import run_ok


def test_an_empty_listing_points_at_the_hidden_headless_runs(home: Path, workdir: Path) -> None:
    run_ok(["-p", "hello"], workdir, home)
    hidden = run_ok(["sessions", "list"], workdir, home).stdout
    assert "No sessions here yet (headless `-p` runs and --no-session leftovers are listed with --all)" in hidden
    assert "commandcode -p" not in hidden
    assert "hello" in run_ok(["sessions", "list", "--all"], workdir, home).stdout
