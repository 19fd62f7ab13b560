"""`commandcode sweep` end to end on sessions made by the real CLI and then aged: what is taken
(last activity, not mtime), what never is (open, named, cleanupPeriodDays 0), the cascade, archive
and exact restore, damaged archives, an interrupted sweep finished by the next run."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from commandcode.checkpoints.store import BackupStore
from commandcode.workspace.archive import list_archives
from helpers.checkpoints import store_ids
from helpers.cli import (
    SCRATCHPAD_BASE,
    assert_error_lines,
    copy_samples,
    hold_writer,
    needs_samples,
    run_cli,
    run_json,
    snapshot,
    stop,
)
from helpers.workspace import age_session, make_session, store_only_checkpoints


def _sweep(args: list[str], cwd: Path, home: Path) -> dict:
    return dict(run_json(["sweep", "--json", *args], cwd, home))


def _sidecar(transcript: Path, suffix: str) -> Path:
    return transcript.with_name(transcript.stem + suffix)


def _edit_session(home: Path, workdir: Path, name: str = "a.txt") -> Path:
    (workdir / name).write_text(f"{name} one\n")
    call = json.dumps({"file_path": name, "content": f"{name} two\n"})
    return make_session(home, workdir, f"call write_file {call}")


def test_last_activity_not_mtime_decides(home: Path, workdir: Path) -> None:
    old, recent = make_session(home, workdir), make_session(home, workdir)
    age_session(old, 40)
    long_ago = time.time() - 90 * 86400
    os.utime(recent, (long_ago, long_ago))  # an old mtime on a recent session: kept
    os.utime(old, None)  # a fresh mtime on an old session: swept
    report = _sweep(["--dry-run"], workdir, home)
    assert [row["id"] for row in report["sessions"]] == [old.stem]
    assert old.exists()
    report = _sweep([], workdir, home)
    assert report["mode"] == "delete" and [row["id"] for row in report["sessions"]] == [old.stem]
    assert not old.exists() and recent.exists()


def test_named_open_and_disabled_sessions_stay(home: Path, workdir: Path) -> None:
    named = make_session(home, workdir)
    run_cli(["-p", "more", "-r", named.stem, "-n", "keep me"], workdir, home)
    held = make_session(home, workdir)
    for transcript in (named, held):
        age_session(transcript, 40)
    holder = hold_writer(held, workdir, home)
    try:
        report = _sweep([], workdir, home)
    finally:
        stop(holder)
    reasons = {row["id"]: row["reason"] for row in report["skipped"]}
    assert reasons == {named.stem: "named", held.stem: "open now"}
    assert named.exists() and held.exists()
    (home / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 0}))
    before = snapshot(home / "projects")
    disabled = _sweep(["--include-named", "--older-than", "1d"], workdir, home)
    assert disabled["disabled_by"] == "cleanupPeriodDays is 0" and disabled["sessions"] == []
    assert snapshot(home / "projects") == before
    (home / "settings.json").write_text("{}")
    taken = _sweep(["--include-named"], workdir, home)
    assert {row["id"] for row in taken["sessions"]} == {named.stem, held.stem}


def test_the_cascade_and_the_store(home: Path, workdir: Path) -> None:
    store_only_checkpoints(workdir)
    doomed, kept = _edit_session(home, workdir, "a.txt"), _edit_session(home, workdir, "b.txt")
    age_session(doomed, 40)
    store = BackupStore()
    for path in store.root.rglob("*"):
        if path.is_file() and len(path.name) == 62:
            os.utime(path, (time.time() - 7200, time.time() - 7200))  # past the GC grace hour
    doomed_refs = store_ids(_sidecar(doomed, ".checkpoints.jsonl"))
    assert doomed_refs
    pad = Path(SCRATCHPAD_BASE)
    doomed_pads = list(pad.rglob(doomed.stem))
    assert doomed_pads, "the -p turn provisioned a scratchpad"
    report = _sweep([], workdir, home)
    assert report["sessions"][0]["id"] == doomed.stem and report["gc"]["deleted_objects"] == len(doomed_refs)
    for suffix in (".jsonl", ".meta.json", ".checkpoints.jsonl"):
        assert not _sidecar(doomed, suffix).exists(), suffix
    assert not any(pad.rglob(doomed.stem))
    assert not any(store.contains(object_id) for object_id in doomed_refs)
    assert kept.exists() and _sidecar(kept, ".checkpoints.jsonl").exists()
    rewind = run_cli(["rewind", kept.stem, "--to", "1", "--mode", "code", "--yes"], workdir, home)
    assert rewind.returncode == 0, rewind.stderr
    assert (workdir / "b.txt").read_text() == "b.txt one\n"


def test_archive_and_an_exact_restore(home: Path, workdir: Path) -> None:
    doomed = _edit_session(home, workdir)
    age_session(doomed, 40)
    os.chmod(_sidecar(doomed, ".meta.json"), 0o640)
    before = {path: (path.read_bytes(), path.stat().st_mode, path.stat().st_mtime_ns)
              for path in doomed.parent.iterdir() if path.name.startswith(doomed.stem)}
    objects = {p.name: p.read_bytes() for p in (home / "objects").rglob("*") if p.is_file() and len(p.name) == 62}
    for path in (home / "objects").rglob("*"):
        if path.is_file() and len(path.name) == 62:
            os.utime(path, (time.time() - 7200, time.time() - 7200))
    report = _sweep(["--archive"], workdir, home)
    assert report["mode"] == "archive" and report["sessions"][0]["archive_bytes"] > 0
    assert not doomed.exists() and len(list_archives()) == 1
    assert report["gc"]["deleted_objects"] == len(objects)  # they live in the archive now
    listed = run_cli(["sweep", "--list-archives"], workdir, home)
    assert doomed.stem in listed.stdout
    restored = run_json(["sweep", "--restore", doomed.stem[:8], "--json"], workdir, home)
    assert restored["restored"] == doomed.stem and restored["objects"] == len(objects)
    after = {path: (path.read_bytes(), path.stat().st_mode, path.stat().st_mtime_ns)
             for path in doomed.parent.iterdir() if path.name.startswith(doomed.stem)}
    assert after == before
    assert {p.name: p.read_bytes() for p in (home / "objects").rglob("*") if p.is_file() and len(p.name) == 62} == objects
    assert list_archives() == []
    rewind = run_cli(["rewind", doomed.stem, "--to", "1", "--mode", "code", "--yes"], workdir, home)
    assert rewind.returncode == 0, rewind.stderr
    assert (workdir / "a.txt").read_text() == "a.txt one\n"


def _archived(home: Path, workdir: Path) -> tuple[Path, Path]:
    doomed = make_session(home, workdir)
    age_session(doomed, 40)
    _sweep(["--archive"], workdir, home)
    return doomed, list_archives()[0]


@pytest.mark.parametrize("damage", ["truncate", "flip", "footer", "empty"])
def test_a_damaged_archive_is_refused_and_kept(home: Path, workdir: Path, damage: str) -> None:
    doomed, archive = _archived(home, workdir)
    data = bytearray(archive.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[10] ^= 0xFF
    elif damage == "footer":
        data = data[:-3]
    else:
        data = bytearray()
    archive.write_bytes(bytes(data))
    completed = run_cli(["sweep", "--restore", doomed.stem], workdir, home)
    line = assert_error_lines(completed)
    assert "truncated" in line or "checksum" in line or "damaged" in line, line
    assert archive.read_bytes() == bytes(data) and not doomed.exists()
    assert not any(path.name.endswith(".ccrestore") for path in home.rglob("*"))


def test_restore_refusals(home: Path, workdir: Path) -> None:
    doomed, archive = _archived(home, workdir)
    assert_error_lines(run_cli(["sweep", "--restore", "nosuch"], workdir, home), error_contains="no archived session")
    assert_error_lines(run_cli(["sweep", "--restore", "../x"], workdir, home), exit_code=2)
    assert_error_lines(run_cli(["sweep", "--restore", doomed.stem, "--archive"], workdir, home), exit_code=2)
    assert_error_lines(run_cli(["sweep", "--older-than", "soon"], workdir, home), error_contains="invalid age",
                       exit_code=2)
    doomed.write_text("someone else's session\n")
    line = assert_error_lines(run_cli(["sweep", "--restore", doomed.stem], workdir, home))
    assert "exists again" in line and archive.exists()
    assert doomed.read_text() == "someone else's session\n"


def test_an_interrupted_sweep_is_finished_by_the_next_run(home: Path, workdir: Path) -> None:
    doomed = make_session(home, workdir)
    status = doomed.stat()
    record = {"sessionId": doomed.stem, "transcript": str(doomed), "size": status.st_size,
              "mtimeNs": status.st_mtime_ns, "cwd": str(workdir), "fileHistory": str(home / "file-history" / doomed.stem),
              "parts": [str(_sidecar(doomed, ".meta.json"))]}
    (home / "sweep").mkdir()
    (home / "sweep" / f"{doomed.stem}.json").write_text(json.dumps(record))
    changed = make_session(home, workdir)
    stale = dict(record, sessionId=changed.stem, transcript=str(changed), size=1, parts=[])
    (home / "sweep" / f"{changed.stem}.json").write_text(json.dumps(stale))
    report = _sweep([], workdir, home)
    assert report["finished_interrupted"] == 1
    assert not doomed.exists() and not _sidecar(doomed, ".meta.json").exists()
    assert changed.exists()  # it changed since its record: kept
    assert list((home / "sweep").glob("*.json")) == []


def test_dry_run_and_text_summary(home: Path, workdir: Path) -> None:
    doomed = make_session(home, workdir)
    age_session(doomed, 40)
    before = snapshot(home)
    completed = run_cli(["sweep", "--dry-run", "--archive"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    assert f"would archive {doomed.stem}" in completed.stdout and "would archive 1 session; would free" in completed.stdout
    assert snapshot(home) == before


@needs_samples
def test_real_cli_sessions_archive_with_their_blobs_and_come_back_exactly(tmp_path: Path, workdir: Path) -> None:
    """The real CLI's own files: its file-history blobs go into the archive and come back, with the
    transcript, meta and checkpoints byte for byte, even once the project folder is gone."""
    data = copy_samples(tmp_path / "samples-home")
    fork = "9e07fc17-d9dc-44f4-9ea9-6398425fd60d"  # unnamed; its blob was copied from its parent
    original = {str(path.relative_to(data)): (path.read_bytes(), path.stat().st_mode, path.stat().st_mtime_ns)
                for path in data.rglob("*") if path.is_file() and fork in str(path)}
    assert any(name.startswith("file-history/") for name in original)
    report = run_json(["sweep", "--archive", "--older-than", "0h", "--json"], workdir, data)
    assert fork in {row["id"] for row in report["sessions"]}
    assert not any(fork in str(path) for path in data.rglob("*") if "archives" not in path.parts)
    named = {row["id"]: row["reason"] for row in report["skipped"]}
    assert named.get("8f5d2778-ec59-47df-be33-2428f5424c22") == "named"
    for leftover in (data / "projects" / "home-dev-proj").iterdir():
        leftover.unlink()
    (data / "projects" / "home-dev-proj").rmdir()
    run_json(["sweep", "--restore", fork, "--json"], workdir, data)
    back = {str(path.relative_to(data)): (path.read_bytes(), path.stat().st_mode, path.stat().st_mtime_ns)
            for path in data.rglob("*") if path.is_file() and fork in str(path)}
    assert back == original


def test_the_index_sidecar_goes_with_the_session(home: Path, workdir: Path) -> None:
    doomed = make_session(home, workdir)
    age_session(doomed, 40)
    run_cli(["sessions", "show", doomed.stem], workdir, home, COMMANDCODE_INDEX="on")
    index = list((home / "index").rglob(f"{doomed.stem}.idx"))
    assert index, "the index sidecar was written"
    expected = index[0].stat().st_size + doomed.stat().st_size
    report = _sweep([], workdir, home)
    assert report["sessions"][0]["bytes"] >= expected  # the index counts in what was freed
    assert not any((home / "index").rglob(f"{doomed.stem}.idx"))


def test_a_session_resumed_after_the_plan_is_kept(home: Path, workdir: Path) -> None:
    from commandcode.workspace.retire.plan import plan_sweep
    from commandcode.workspace.retire.run import run_sweep

    doomed = make_session(home, workdir)
    age_session(doomed, 40)
    plan = plan_sweep(str(workdir), older_than_days=30, include_named=False)
    assert [candidate.session_id for candidate in plan.chosen] == [doomed.stem]
    run_cli(["-p", "still working on it", "-r", doomed.stem], workdir, home)  # between the plan and the sweep
    report = run_sweep(plan, archive=False, dry_run=False, collect_garbage=False)
    assert report.sessions == [] and report.skipped[-1] == {"id": doomed.stem, "reason": "active recently"}
    assert doomed.exists()


@pytest.mark.parametrize("planted, args", [("archives", ["sweep", "--archive"]), ("sweep", ["sweep"])])
def test_a_file_where_a_folder_of_ours_goes_is_one_line_and_loses_nothing(home: Path, workdir: Path, planted: str,
                                                                          args: list[str]) -> None:
    doomed = make_session(home, workdir)
    age_session(doomed, 40)
    before = snapshot(home / "projects")
    (home / planted).write_text("planted\n")
    completed = run_cli(args, workdir, home)
    assert completed.returncode == 1 and completed.stderr.startswith("error: ")
    assert len(completed.stderr.splitlines()) <= 2 and "Traceback" not in completed.stderr
    assert snapshot(home / "projects") == before and (home / planted).read_text() == "planted\n"


def test_an_unknown_sidecar_and_its_objects_go_with_the_session(home: Path, workdir: Path) -> None:
    """A sidecar a later release adds (say redo points) is archived and restored with its session,
    and the store objects only it names travel in the archive."""
    from commandcode.checkpoints.store import BackupStore

    doomed = make_session(home, workdir)
    age_session(doomed, 40)
    store = BackupStore()
    redo_object = store.put_bytes(b"the bytes a redo would put back")
    old = time.time() - 7200
    os.utime(store.object_path(redo_object), (old, old))
    redo = _sidecar(doomed, ".redo.jsonl")
    redo.write_text(json.dumps({"files": [{"hash": redo_object}]}) + "\n")
    report = _sweep(["--archive"], workdir, home)
    assert [row["id"] for row in report["sessions"]] == [doomed.stem]
    assert not redo.exists() and not store.contains(redo_object)  # it travels in the archive
    run_json(["sweep", "--restore", doomed.stem, "--json"], workdir, home)
    assert redo.exists() and store.read(redo_object) == b"the bytes a redo would put back"


def test_a_frame_that_fails_its_checksum_late_leaves_nothing_staged(home: Path, workdir: Path) -> None:
    """Damage the last file's frame and fix the whole-archive checksum, so only the per-file
    check can catch it: the files staged before it are removed, nothing appears."""
    import hashlib

    from commandcode.workspace.archive import FOOTER, read_trailer

    doomed, archive = _archived(home, workdir)
    trailer = read_trailer(archive)
    data = bytearray(archive.read_bytes())
    last = trailer["files"][-1]
    data[last["offset"] + last["length"] // 2] ^= 0x01
    trailer["framesSha256"] = hashlib.sha256(bytes(data[: trailer["framesBytes"]])).hexdigest()
    text = json.dumps(trailer, separators=(",", ":")).encode()
    archive.write_bytes(bytes(data[: trailer["framesBytes"]]) + text + FOOTER.pack(b"CCARCHV1", len(text)))
    line = assert_error_lines(run_cli(["sweep", "--restore", doomed.stem], workdir, home))
    assert "checksum" in line or "decompress" in line, line
    assert not doomed.exists() and archive.exists()
    assert not [path for path in home.rglob("*") if path.name.endswith(".ccrestore")]


def test_a_rewound_sessions_restore_lock_goes_with_it(home: Path, workdir: Path) -> None:
    """Every rewind takes `journals/<sid>.json.lock` and leaves the file (a lock file is reused,
    never removed while a rewind may hold it); a sweep of the session removes it with the rest."""
    doomed = _edit_session(home, workdir)
    kept = _edit_session(home, workdir, "b.txt")
    for transcript in (doomed, kept):
        rewound = run_cli(["rewind", transcript.stem, "--to", "1", "--mode", "code", "--yes"], workdir, home)
        assert rewound.returncode == 0, rewound.stderr
    locks = {transcript: home / "journals" / f"{transcript.stem}.json.lock" for transcript in (doomed, kept)}
    assert all(lock.is_file() for lock in locks.values())
    age_session(doomed, 40)
    report = _sweep([], workdir, home)
    assert [row["id"] for row in report["sessions"]] == [doomed.stem]
    assert not locks[doomed].exists() and locks[kept].is_file()
