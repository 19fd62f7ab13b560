"""A rewind's result names its files as `Path`s made on first access, and a restore's changes
name each target as the caller did (`str` or its own `Path`)."""

from __future__ import annotations

from pathlib import Path

from commandcode.checkpoints import store as backups
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.rewind_result import RewindResult


def test_paths_added_as_text_read_as_paths_and_shown_as_text() -> None:
    result = RewindResult(number=1, mode=RewindMode.CODE, dry_run=False)
    result.add_changed("write", ["/p/a.txt", "/p/b.txt"])
    result.add_changed("delete", ["/p/gone.txt"])
    assert result.to_json()["written"] == ["/p/a.txt", "/p/b.txt"]
    assert result.written == [Path("/p/a.txt"), Path("/p/b.txt")]
    assert result.deleted == [Path("/p/gone.txt")] and result.unchanged == []
    result.deleted.append(Path("/p/folder"))  # the lists are the result's own, once made
    result.add_changed("delete", ["/p/other"])
    result.add_changed("unchanged", ["/p/same.txt"])
    shown = result.to_json()
    assert shown["deleted"] == ["/p/gone.txt", "/p/folder", "/p/other"]
    assert shown["unchanged"] == ["/p/same.txt"] and result.unchanged == [Path("/p/same.txt")]


def test_a_restore_names_each_target_as_the_caller_did(tmp_path: Path) -> None:
    store = backups.BackupStore(tmp_path / "objects")
    (tmp_path / "text.txt").write_text("one")
    (tmp_path / "path.txt").write_text("two")
    by_path = tmp_path / "path.txt"
    targets = [backups.RestoreTarget(str(tmp_path / "text.txt"), None), backups.RestoreTarget(by_path, None)]
    outcome = backups.check_restore(store, targets, confine_to=tmp_path)
    assert [change.action for change in outcome.changes] == ["delete", "delete"]
    assert outcome.changes[0].path == str(tmp_path / "text.txt") and outcome.changes[0].path.__class__ is str
    assert outcome.changes[1].path is by_path


def test_a_recorded_path_resolves_as_normpath_of_the_join_would() -> None:
    """`records._resolved` skips the normalisation only where it would change nothing."""
    import itertools
    import os

    from commandcode.checkpoints.records import _resolved

    parts = ["a", ".", "..", "", ".x", "x.", "...", "/"]
    for count in range(4):
        for chosen in itertools.product(parts, repeat=count):
            for lead in ("", "/", "//"):
                path = lead + "/".join(chosen)
                for base in ("/tmp/project", "/", "/tmp/x/", "relative/b", ""):
                    assert _resolved(path, base) == os.path.normpath(os.path.join(base, path)), (path, base)
