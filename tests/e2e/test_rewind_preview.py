"""`commandcode rewind --dry-run [--diff] [--json]`, `--redo` and `checkpoints list --all` as a user
runs them: real processes, files and sessions. The preview names what happens to each file
(restored, recreated, deleted, left alone), diffs text, sizes and hashes binaries, and marks
outside edits with their time; refusals are one line and change nothing."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import assert_error_lines, only_transcript, run_cli, run_json, run_ok, snapshot


def _turn(cwd: Path, data: Path, *calls: tuple[str, dict[str, str]], session: str | None = None) -> str:
    prompt = "\n".join(f"call {name} {json.dumps(args)}" for name, args in calls)
    run_ok(["-p", prompt] + (["-r", session] if session else []), cwd, data)
    return only_transcript(data, cwd).name[: -len(".jsonl")]


def _session(cwd: Path, data: Path) -> str:
    (cwd / "kept.txt").write_text("line 1\nline 2\n")
    (cwd / "gone.txt").write_text("will be deleted by bash\n")
    (cwd / "big.bin").write_bytes(b"\0" * (10 * 1024 * 1024 + 1))
    session = _turn(cwd, data, ("write_file", {"file_path": "kept.txt", "content": "line 1\nline two\n"}),
                    ("write_file", {"file_path": "new/made.txt", "content": "new\n"}),
                    ("write_file", {"file_path": "blob.bin", "content": "x"}),
                    ("edit_file", {"file_path": "big.bin", "old_string": "a", "new_string": "b"}))
    (cwd / "blob.bin").write_bytes(b"\x00\x01\x02binary")  # an edit outside the tracked tools
    return session


def test_dry_run_diff_json_lists_every_file(home: Path, workdir: Path) -> None:
    session = _session(workdir, home)
    before = snapshot(workdir)
    preview = run_json(["rewind", session, "--to", "1", "--mode", "code", "--dry-run", "--diff", "--json"], workdir, home)
    rows = {Path(row["path"]).name: row for row in preview["files"]}
    assert rows["kept.txt"]["action"] == "restored" and rows["kept.txt"]["outside_edit"] is None
    assert "-line two\n+line 2\n" in rows["kept.txt"]["diff"]
    assert rows["made.txt"]["action"] == "deleted" and "-new\n" in rows["made.txt"]["diff"]
    assert rows["blob.bin"]["action"] == "deleted" and rows["blob.bin"]["outside_edit"]["mtime"].endswith("Z")
    assert rows["blob.bin"]["binary"]["old"]["size"] == 9 and rows["blob.bin"]["binary"]["new"] is None
    assert (rows["big.bin"]["action"], rows["big.bin"]["reason"]) == ("left alone", "too_large")
    assert snapshot(workdir) == before, "a dry run writes nothing"
    text = run_ok(["rewind", session, "--to", "1", "--mode", "code", "--dry-run", "--diff"], workdir, home).stdout
    assert "restore    kept.txt" in text and "+line 2" in text and "delete     new/made.txt" in text
    assert "blob.bin (changed outside the tracked tools, modified " in text
    assert "leave      big.bin (over 10 MB, never backed up)" in text


def test_the_rewind_refuses_the_outside_edit_the_preview_marked(home: Path, workdir: Path) -> None:
    session = _session(workdir, home)
    before = snapshot(workdir)
    refused = run_cli(["rewind", session, "--to", "1", "--mode", "code", "--yes"], workdir, home)
    assert "blob.bin was changed outside the tracked tools" in assert_error_lines(refused)
    assert snapshot(workdir) == before
    run_ok(["rewind", session, "--to", "1", "--mode", "code", "--yes", "--force"], workdir, home)
    assert not (workdir / "new").exists() and not (workdir / "blob.bin").exists()
    run_ok(["rewind", session, "--redo", "--yes"], workdir, home)
    assert snapshot(workdir) == before, "the forced rewind kept the outside edit for the redo"


def test_recreated_files_and_redo_json(home: Path, workdir: Path) -> None:
    (workdir / "a.txt").write_text("a\n")
    session = _turn(workdir, home, ("write_file", {"file_path": "a.txt", "content": "b\n"}))
    (workdir / "a.txt").unlink()
    run_ok(["-p", "call bash {\"command\": \"true\"}", "-r", session], workdir, home)
    preview = run_json(["rewind", session, "--to", "1", "--mode", "code", "--dry-run", "--json"], workdir, home)
    assert [(Path(row["path"]).name, row["action"]) for row in preview["files"]] == [("a.txt", "recreated")]
    run_ok(["rewind", session, "--to", "1", "--mode", "both", "--yes", "--force"], workdir, home)
    assert (workdir / "a.txt").read_text() == "a\n"
    listed = run_json(["checkpoints", "list", session, "--json"], workdir, home)
    assert listed["checkpoints"] == [] and listed["canRedo"] is True
    every = run_json(["checkpoints", "list", session, "--all", "--json"], workdir, home)["checkpoints"]
    assert [(row["number"], row["rewound"]) for row in every] == [(1, True), (2, True)]
    dry = run_json(["rewind", session, "--redo", "--dry-run", "--json"], workdir, home)
    assert dry["redo"] is True and dry["dryRun"] is True
    assert [(Path(row["path"]).name, row["action"]) for row in dry["files"]] == [("a.txt", "deleted")]
    done = run_json(["rewind", session, "--redo", "--yes", "--json"], workdir, home)
    assert done["redo"] is True and not (workdir / "a.txt").exists()
    assert [row["number"] for row in run_json(["checkpoints", "list", session, "--json"], workdir, home)["checkpoints"]] == [1, 2]


def test_refusals_are_one_line_and_change_nothing(home: Path, workdir: Path) -> None:
    session = _turn(workdir, home, ("write_file", {"file_path": "a.txt", "content": "b\n"}))
    before = snapshot(workdir)
    cases = [
        (["rewind", session, "--redo", "--yes"], 1, "nothing to redo"),
        (["rewind", session, "--to", "1", "--mode", "code", "--diff"], 2, "--diff previews a rewind"),
        (["rewind", session, "--redo", "--to", "1"], 2, "--redo takes no --to"),
        (["rewind", session, "--mode", "code", "--yes"], 2, "--to N (or --redo) is required"),
    ]
    for args, code, message in cases:
        assert_error_lines(run_cli(args, workdir, home), error_contains=message, exit_code=code)
    assert snapshot(workdir) == before
