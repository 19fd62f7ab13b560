"""The shortcuts of a rewind's Python side (issue 30) give what the long way gave: its result
names its files as `Path`s made on first access, a restore's changes name each target as the
caller did (`str` or its own `Path`), a recorded path resolves as `normpath` would, and the usual
item parses as the general parser would."""

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
    by_text = [backups.RestoreTarget(str(tmp_path / "text.txt"), None)]
    outcome = backups.check_restore(store, by_text, confine_to=tmp_path)
    assert [change.action for change in outcome.changes] == ["delete"]
    assert outcome.changes[0].path == str(tmp_path / "text.txt") and outcome.changes[0].path.__class__ is str
    outcome = backups.check_restore(store, [backups.RestoreTarget(by_path, None)], confine_to=tmp_path)
    assert outcome.changes[0].action == "delete" and outcome.changes[0].path is by_path
    # targets named by `Path` get `Path`s back, also where the restore normalised one
    roundabout = backups.RestoreTarget(tmp_path / "sub" / ".." / "text.txt", None)
    changes = backups.check_restore(store, [roundabout], confine_to=tmp_path).changes
    assert changes[0].path == tmp_path / "text.txt" and isinstance(changes[0].path, Path)


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


class _General(dict):  # type: ignore[type-arg]
    """A dict that `FileBackup.from_json`'s fast path (for `dict` itself) leaves to the general one."""


def test_the_usual_items_fast_parse_agrees_with_the_general_one() -> None:
    import random

    from commandcode.checkpoints.records import FileBackup

    digest = "a" * 64
    values: dict[str, list[object]] = {
        "path": ["/a", "/é", "/a\x00b", 3, None, "relative"],
        "hash": [digest, "A" * 64, "zz", None, 5, "a" * 63, " " + "a" * 63, "g" * 64],
        "algo": ["blake3", "sha256", None, "md5", ["x"], 1], "mode": [420, -1, True, 2**32, 1.5, None, "420"],
        "afterHash": [digest, None, "x", 7], "blake3": [digest, None, 3], "skipped": ["too_large", 4], "other": [1]}
    chosen = random.Random(5)
    fast = 0
    for _ in range(20_000):
        item = {key: chosen.choice(choices) for key, choices in values.items()
                if chosen.random() < (0.9 if key in ("path", "hash") else 0.4)}
        parsed, general = FileBackup.from_json(item), FileBackup.from_json(_General(item))
        assert parsed == general, item
        fast += parsed is not None and parsed.problem is None and "skipped" not in item and "other" not in item
    assert fast > 100  # the fast path was taken, and agreed
