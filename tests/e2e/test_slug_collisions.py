"""Two folders, one project slug; slugs too long for a file name; references too long for one.

`a b` and `a_b` slug to the same project folder (the real CLI's rule, kept): `-c`, listings and
name/prefix lookups go by the header's `cwd`, so each folder sees its own sessions, while an
explicit id still resumes a session from anywhere. A cwd whose slug exceeds 255 bytes gets a cut
folder name (`paths.project_folder_name`) and its sessions list, resume and rewind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from commandcode.config.paths import project_folder_name
from commandcode.config.slug import project_slug
from helpers.cli import cli_env, run_cli, run_json, run_ok, snapshot, transcripts


def write_call(name: str, content: str) -> str:
    return "call write_file " + json.dumps({"file_path": name, "content": content})


def session_ids(listing: list[dict]) -> set[str]:
    return {item["id"] for item in listing}


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Path, Path]:
    """Two folders whose absolute paths slug to the same project folder."""
    spaced, underscored = tmp_path / "w" / "a b", tmp_path / "w" / "a_b"
    spaced.mkdir(parents=True)
    underscored.mkdir()
    assert project_slug(str(spaced.resolve())) == project_slug(str(underscored.resolve()))
    return spaced.resolve(), underscored.resolve()


def only_session(data: Path, cwd: Path) -> str:
    listing = run_json(["sessions", "list", "--all", "--json"], cwd, data)
    assert len(listing) == 1, listing
    assert listing[0]["cwd"] == str(cwd)
    return listing[0]["id"]


def test_continue_in_a_twin_folder_does_not_take_the_other_folders_session(home: Path, twins: tuple[Path, Path]) -> None:
    spaced, underscored = twins
    run_ok(["-p", write_call("f.txt", "A\n")], spaced, home)
    before = snapshot(home)
    refused = run_cli(["-c", "-p", write_call("g.txt", "B\n")], underscored, home)
    assert refused.returncode == 1, refused
    assert refused.stderr.startswith("error: no session to continue in this directory"), refused.stderr
    assert "Traceback" not in refused.stderr
    assert snapshot(home) == before and not (underscored / "g.txt").exists()

    run_ok(["-p", write_call("g.txt", "B\n")], underscored, home)
    mine = only_session(home, underscored)
    theirs = only_session(home, spaced)
    assert mine != theirs
    run_ok(["-c", "-p", write_call("g.txt", "C\n")], underscored, home)
    assert only_session(home, underscored) == mine  # -c continued this folder's session
    assert (underscored / "g.txt").read_text() == "C\n"
    # ...and its rewind puts this folder's file back: the edit is not "outside" its session.
    run_ok(["rewind", mine, "--to", "2", "--mode", "code", "--yes"], underscored, home)
    assert (underscored / "g.txt").read_text() == "B\n"
    assert (spaced / "f.txt").read_text() == "A\n"
    # Both sessions are in the one project folder the real CLI uses, and --all-projects sees both.
    assert {Path(path).parent for path in transcripts(home)} == {home / "projects" / project_slug(str(spaced))}
    assert session_ids(run_json(["sessions", "list", "--all", "--all-projects", "--json"], spaced, home)) == {mine, theirs}


def test_names_and_prefixes_resolve_to_this_folders_session_first(home: Path, twins: tuple[Path, Path], tmp_path: Path) -> None:
    spaced, underscored = twins
    run_ok(["-p", "hello", "-n", "Same name"], spaced, home)
    run_ok(["-p", "hello", "-n", "Same name"], underscored, home)
    theirs, mine = only_session(home, spaced), only_session(home, underscored)
    for cwd, expected in ((spaced, theirs), (underscored, mine)):
        assert run_json(["sessions", "show", "same name", "--json"], cwd, home)["id"] == expected
        assert run_json(["sessions", "show", expected[:6], "--json"], cwd, home)["id"] == expected
        run_ok(["-r", "same name", "-p", "again"], cwd, home)
    # Elsewhere both match: a name is ambiguous there, never a silent pick.
    third = tmp_path / "third"
    third.mkdir()
    ambiguous = run_cli(["sessions", "show", "same name"], third, home)
    assert ambiguous.returncode == 1 and "2 sessions are named" in ambiguous.stderr, ambiguous
    # An explicit id from the other folder still resumes there (resuming elsewhere is allowed).
    run_ok(["-r", theirs, "-p", "from the twin"], underscored, home)
    shown = run_json(["sessions", "context", theirs, "--json"], spaced, home)
    texts = [block.get("text") for message in shown["messages"] for block in message["content"]]
    assert "from the twin" in texts


def test_a_prefix_shared_across_twins_prefers_this_folder(home: Path, twins: tuple[Path, Path]) -> None:
    """Two session ids sharing a prefix, one per twin folder: each folder's prefix is its own."""
    spaced, underscored = twins
    run_ok(["-p", "one"], spaced, home)
    run_ok(["-p", "two"], underscored, home)
    folder = home / "projects" / project_slug(str(spaced))
    for cwd, new_id in ((spaced, "abcdef01-0000-4000-8000-000000000001"), (underscored, "abcdef01-0000-4000-8000-000000000002")):
        old_id = only_session(home, cwd)
        for path in folder.glob(f"{old_id}*"):
            path.rename(folder / path.name.replace(old_id, new_id))
    assert run_json(["sessions", "show", "abcdef01", "--json"], spaced, home)["id"].endswith("1")
    assert run_json(["sessions", "show", "abcdef01", "--json"], underscored, home)["id"].endswith("2")


def deep_folder(tmp_path: Path, slug_bytes: int) -> Path:
    """A folder whose absolute path slugs to at least `slug_bytes` bytes."""
    folder = tmp_path / "deep"
    while len(project_slug(str(folder))) < slug_bytes:
        folder = folder / ("segment" + "x" * 90)
    folder.mkdir(parents=True)
    return folder.resolve()


def test_long_slug_folder_rule() -> None:
    exact = "a" * 255
    assert project_folder_name(exact) == exact  # the real CLI's folder, while it fits
    long = "b" * 300
    cut = project_folder_name(long)
    assert cut == "b" * 200 + "-" + hashlib.sha256(long.encode()).hexdigest()[:8]
    assert len(cut) == 209 and project_folder_name("b" * 301) != cut


@pytest.mark.parametrize("slug_bytes", [300, 1000])
def test_a_cwd_with_a_too_long_slug_lists_resumes_and_rewinds(home: Path, tmp_path: Path, slug_bytes: int) -> None:
    cwd = deep_folder(tmp_path, slug_bytes)
    slug = project_slug(str(cwd))
    assert len(slug) > 255
    run_ok(["-p", write_call("f.txt", "one\n")], cwd, home)
    sid = only_session(home, cwd)
    folder = home / "projects" / project_folder_name(slug)
    assert (folder / f"{sid}.jsonl").is_file() and len(folder.name) <= 255
    run_ok(["-c", "-p", write_call("f.txt", "two\n")], cwd, home)
    assert only_session(home, cwd) == sid
    assert len(run_json(["checkpoints", "list", sid, "--json"], cwd, home)["checkpoints"]) == 2
    run_ok(["rewind", sid, "--to", "2", "--mode", "both", "--yes"], cwd, home)
    assert (cwd / "f.txt").read_text() == "one\n"
    # From another folder too: the session's own cwd (its header, whose cut folder it is in) bounds it.
    run_ok(["-r", sid, "-p", write_call(str(cwd / "f.txt"), "three\n")], cwd, home)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run_ok(["rewind", sid, "--to", "2", "--mode", "code", "--yes"], elsewhere, home)
    assert (cwd / "f.txt").read_text() == "one\n"
    run_ok(["sessions", "list"], cwd, home)
    assert session_ids(run_json(["sessions", "list", "--all", "--all-projects", "--json"], tmp_path, home)) == {sid}


@pytest.mark.parametrize("command", [
    ["sessions", "show", "{ref}"], ["sessions", "context", "{ref}"], ["sessions", "tree", "{ref}"],
    ["checkpoints", "list", "{ref}"], ["rewind", "{ref}", "--to", "1", "--mode", "code", "--dry-run"],
    ["-r", "{ref}", "-p", "hello"],
])
@pytest.mark.parametrize("ref", ["x" * 300, "y" * 5000, "z" * 300 + ".jsonl", "/" + "d" * 300 + "/s.jsonl"])
def test_a_reference_too_long_for_a_file_name_is_not_found(home: Path, tmp_path: Path, command: list[str], ref: str) -> None:
    cwd = tmp_path / "proj"
    cwd.mkdir()
    run_ok(["-p", "hello"], cwd, home)
    before = snapshot(home)
    completed = run_cli([part.replace("{ref}", ref) for part in command], cwd, home)
    assert completed.returncode == 1, completed
    # a reference shaped like a transcript path is told that no such file exists
    said = f"error: {ref}: no such file" if ref.endswith(".jsonl") else "error: no session matches"
    assert completed.stderr.startswith(said), completed.stderr
    assert "Traceback" not in completed.stderr and "too long" not in completed.stderr
    assert snapshot(home) == before


def test_a_session_id_too_long_for_its_sidecars(home: Path, tmp_path: Path) -> None:
    """A transcript named with 249 characters fits; its `.meta.json` and `.checkpoints.jsonl`
    names do not. Every read command says so in one line or shows the session."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    run_ok(["-p", "hello"], cwd, home)
    (old,) = transcripts(home)
    long_id = "l" * 249
    long_transcript = old.with_name(long_id + ".jsonl")
    shutil.copyfile(old, long_transcript)
    before = snapshot(home)
    for command in (["sessions", "list", "--all", "--json"], ["sessions", "show", long_id], ["sessions", "show", "lll"],
                    ["sessions", "context", long_id], ["sessions", "tree", long_id, "--json"],
                    ["checkpoints", "list", long_id], ["rewind", long_id, "--to", "1", "--mode", "code", "--dry-run"],
                    ["sessions", "show", str(long_transcript)]):
        completed = run_cli(command, cwd, home)
        assert completed.returncode in (0, 1), (command, completed)
        assert "Traceback" not in completed.stderr and "internal error" not in completed.stderr, (command, completed.stderr)
        if completed.returncode:
            assert len(completed.stderr.splitlines()) <= 2 and completed.stderr.startswith("error: "), completed.stderr
    assert snapshot(home) == before


def run_raw(args: list[str], cwd: Path, data: Path) -> tuple[int, str, str]:
    """Like `run_cli`, but output that is not UTF-8 (a file name echoed in a reply) decodes too."""
    completed = subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=cwd, env=cli_env(data),
                               capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    return (completed.returncode, completed.stdout.decode("utf-8", "surrogateescape"),
            completed.stderr.decode("utf-8", "surrogateescape"))


def test_a_cwd_that_is_not_utf8(home: Path, tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/caf\xe9-\xff"
    os.mkdir(raw)
    cwd = Path(os.fsdecode(raw))
    for args in (["-p", write_call("f.txt", "one\n")], ["-c", "-p", write_call("f.txt", "two\n")]):
        code, _, stderr = run_raw(args, cwd, home)
        assert code == 0, stderr
    code, stdout, stderr = run_raw(["sessions", "list", "--all", "--json"], cwd, home)
    assert code == 0, stderr
    (listed,) = json.loads(stdout)
    code, _, stderr = run_raw(["rewind", listed["id"], "--to", "2", "--mode", "code", "--yes"], cwd, home)
    assert code == 0, stderr
    assert (cwd / "f.txt").read_text() == "one\n"


def test_a_cwd_deeper_than_path_max(home: Path, tmp_path: Path) -> None:
    """A cwd of 5,000+ bytes (beyond PATH_MAX, reachable only step by step): sessions start,
    list and continue; a file edit there cannot be backed up by absolute path, so the turn is
    refused with one line and the file is not written (nothing half done, no traceback)."""
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(20):
            os.mkdir("d" * 250, dir_fd=folder)
            deeper = os.open("d" * 250, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = deeper

        def run(args: list[str]) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "commandcode", *args], env=cli_env(home), capture_output=True,
                                  text=True, timeout=60, stdin=subprocess.DEVNULL, pass_fds=(folder,),
                                  preexec_fn=lambda: os.fchdir(folder))

        assert run(["-p", "hello"]).returncode == 0
        listed = run(["sessions", "list", "--all", "--json"])
        assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 1, listed
        assert run(["-c", "-p", "again"]).returncode == 0
        refused = run(["-c", "-p", write_call("f.txt", "x\n")])
        assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused
        assert len(refused.stderr.splitlines()) == 1 and "File name too long" in refused.stderr, refused.stderr
        assert "f.txt" not in os.listdir(folder)
    finally:
        os.close(folder)


@pytest.mark.parametrize("header_cwd", ["/somewhere/else", "relative/dir", "", None, 7])
def test_a_session_whose_header_names_no_twin_stays_visible(home: Path, twins: tuple[Path, Path], header_cwd: object) -> None:
    """Only a twin (a directory filed in this same folder) claims a session away: a header cwd
    that would be filed elsewhere (a copied-in or forged session) leaves it listed where it is."""
    spaced, underscored = twins
    run_ok(["-p", "hello"], spaced, home)
    (transcript,) = transcripts(home)
    lines = transcript.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["cwd"] = header_cwd
    transcript.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    for cwd in (spaced, underscored):
        assert session_ids(run_json(["sessions", "list", "--all", "--json"], cwd, home)) == {transcript.stem}
