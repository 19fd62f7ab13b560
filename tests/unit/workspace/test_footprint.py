"""`commandcode sessions du` and the `/status` line: bytes per kind match the files on disk, an
object shared by two sessions is counted once (apart), archives and what a sweep would free."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from commandcode.sessions.files import SessionFiles
from commandcode.workspace.footprint import human, status_line
from helpers.checkpoints import store_ids
from helpers.cli import run_cli, run_json
from helpers.workspace import age_session, make_session, store_only_checkpoints


def _objects(home: Path) -> dict[str, int]:
    return {path.parent.name + path.name: path.stat().st_size for path in (home / "objects").rglob("*")
            if path.is_file() and len(path.name) == 62}


def test_du_counts_every_kind_and_shared_objects_once(home: Path, workdir: Path) -> None:
    store_only_checkpoints(workdir)
    (workdir / "shared.txt").write_text("the same bytes\n" * 50)
    (workdir / "own.txt").write_text("only the second\n" * 40)
    first = make_session(home, workdir, 'call write_file {"file_path": "shared.txt", "content": "one\\n"}')
    (workdir / "shared.txt").write_text("the same bytes\n" * 50)  # the same content again: the same object
    second = make_session(home, workdir, 'call write_file {"file_path": "shared.txt", "content": "two\\n"}')
    run_cli(["-p", 'call write_file {"file_path": "own.txt", "content": "x\\n"}', "-r", second.stem], workdir, home)
    objects = _objects(home)
    assert len(objects) == 2
    report = run_json(["sessions", "du", "--json"], workdir, home)
    rows = {row["id"]: row for row in report["top_sessions"]}
    shared_id = next(object_id for object_id in objects if object_id != _own_object(home, second, objects))
    assert rows[first.stem]["objects"] == 0 and rows[first.stem]["shared_objects"] == objects[shared_id]
    assert rows[second.stem]["objects"] == objects[_own_object(home, second, objects)]
    assert report["shared_objects"] == objects[shared_id]
    assert rows[first.stem]["transcript"] == first.stat().st_size
    sidecars = sum(first.with_name(first.stem + suffix).stat().st_size for suffix in (".meta.json", ".checkpoints.jsonl"))
    assert rows[first.stem]["sidecars"] == sidecars
    project = report["projects"][0]
    assert project["sessions"] == 2 and project["transcript"] == first.stat().st_size + second.stat().st_size
    total = sum(path.stat().st_size for path in home.rglob("*") if path.is_file() and not path.is_symlink())
    assert report["data_dir_total"] == total
    assert report["sweep_would_free"]["sessions"] == 0
    age_session(first, 40)
    aged = run_json(["sessions", "du", "--json"], workdir, home)
    free = aged["sweep_would_free"]
    assert free["sessions"] == 1 and free["bytes"] >= rows[first.stem]["transcript"]
    text = run_cli(["sessions", "du"], workdir, home)
    assert text.returncode == 0 and "would free" in text.stdout and "counted once" in text.stdout


def _own_object(home: Path, transcript: Path, objects: dict[str, int]) -> str:
    own = store_ids(transcript.with_name(transcript.stem + ".checkpoints.jsonl"))
    first_refs: set[str] = set()
    for path in (home / "projects").rglob("*.checkpoints.jsonl"):
        if path.name != transcript.stem + ".checkpoints.jsonl":
            first_refs |= store_ids(path)
    (only,) = own - first_refs
    return str(only)


def test_archives_and_scratchpads_show(home: Path, workdir: Path) -> None:
    old = make_session(home, workdir, 'call bash {"command": "head -c 5000 /dev/zero > $COMMANDCODE_SCRATCHPAD/z"}')
    report = run_json(["sessions", "du", "--json"], workdir, home)
    assert report["top_sessions"][0]["scratchpad"] == 5000
    age_session(old, 40)
    run_json(["sweep", "--archive", "--json"], workdir, home)
    after = run_json(["sessions", "du", "--json", "--all-projects"], workdir, home)
    assert after["projects"][0]["archive_files"] == 1 and after["projects"][0]["archives"] > 0


def test_status_line(home: Path, workdir: Path) -> None:
    (workdir / "a.txt").write_text("a" * 3000)
    transcript = make_session(home, workdir, 'call write_file {"file_path": "a.txt", "content": "b"}')
    line = status_line(SessionFiles.for_transcript(transcript))
    assert line.startswith("disk: ") and f"{human(transcript.stat().st_size)} transcript" in line
    assert "checkpoints" in line and "0 B checkpoints" not in line
    shutil.rmtree(home / "objects")  # the store copies and the raw sha256 blobs are the checkpoints' bytes
    shutil.rmtree(home / "file-history")
    os.sync()
    assert "0 B checkpoints" in status_line(SessionFiles.for_transcript(transcript))
    assert human(999) == "999 B" and human(1500) == "1.5 kB" and human(2_500_000) == "2.5 MB"


def test_a_redo_points_packed_object_counts_until_a_collection_absorbs_it(home: Path, workdir: Path) -> None:
    """A rewind keeps what it replaces in a pack (format §7.2): until a collection makes them
    loose, `sessions du`, `/status`, the sweep's plan and the store's usage count those objects by
    their frames, not as 0 bytes."""
    from commandcode.checkpoints.packed import packed_sizes
    from commandcode.checkpoints.store import BackupStore
    from commandcode.workspace.retire.plan import plan_sweep

    store_only_checkpoints(workdir)
    (workdir / "a.txt").write_text("before the turn\n" * 200)
    session = make_session(home, workdir, 'call write_file {"file_path": "a.txt", "content": "' +
                           "left by the turn " * 300 + '\\n"}')
    rewound = run_cli(["rewind", session.stem, "--to", "1", "--mode", "code", "--yes"], workdir, home)
    assert rewound.returncode == 0, rewound.stderr
    packed = packed_sizes(home / "objects")
    loose = _objects(home)
    kept = [object_id for object_id in packed if object_id not in loose]
    assert kept, "the redo point's object is in a pack, not loose"
    own = store_ids(session.with_name(session.stem + ".checkpoints.jsonl"))
    assert set(kept) <= own
    expected = sum(loose.get(object_id) or packed[object_id] for object_id in own)
    report = run_json(["sessions", "du", "--json"], workdir, home)
    [row] = report["top_sessions"]
    assert row["objects"] + row["shared_objects"] == expected
    assert human(expected) in status_line(SessionFiles.for_transcript(session))
    objects, size = BackupStore(home / "objects").usage()
    assert objects == len(loose) + len(kept) and size == sum(loose.values()) + sum(packed[i] for i in kept)
    age_session(session, 40)
    plan = plan_sweep(str(workdir), older_than_days=30, include_named=False)
    assert all(plan.object_sizes[object_id] == packed[object_id] for object_id in kept)
