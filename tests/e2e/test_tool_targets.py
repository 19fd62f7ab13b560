"""The agent's file tools against every kind of target: each tool (read_file, write_file,
edit_file) × each target (a regular file, a missing one, a FIFO, a socket, a character device, a
folder, a symlink to each of those, the session's own transcript, a symlink to it, a path into the
data dir through a symlinked folder, lone-surrogate text) → the tool result the model sees, and
every target left exactly as it was unless the tool was meant to change it.

Every case of one tool runs in one real `commandcode -p` process (the calls of a prompt run in
order); a timeout detects a hang (a FIFO used to block write_file forever).
"""

from __future__ import annotations

import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import entries, run_cli, transcripts

ORIGINAL = "important data\n"
REFUSED_DATA = "inside commandcode's data folder"
NOT_REGULAR = {"fifo": "is a FIFO, not a regular file", "socket": "is a socket, not a regular file",
               "chardev": "is a character device, not a regular file", "folder": "is a folder, not a regular file"}
SYMLINK = "is a symlink; {tool} does not write through it"
NO_SUCH = "No such file or directory"

# kind -> what each tool reports (a substring of the tool result the model sees).
EXPECTED: dict[str, dict[str, str]] = {
    "regular": {"read_file": "Read 1/1 file, 1 line\n1: important data", "write_file": "has been updated successfully",
                "edit_file": "has been updated successfully"},
    "missing": {"read_file": NO_SUCH, "write_file": "File created successfully at:", "edit_file": NO_SUCH},
    **{kind: {tool: text for tool in ("read_file", "write_file", "edit_file")} for kind, text in NOT_REGULAR.items()},
    "link_regular": {"read_file": "Read 1/1 file, 1 line\n1: important data", "write_file": SYMLINK, "edit_file": SYMLINK},
    "link_missing": {"read_file": NO_SUCH, "write_file": SYMLINK, "edit_file": SYMLINK},
    **{f"link_{kind}": {"read_file": text, "write_file": SYMLINK, "edit_file": SYMLINK} for kind, text in NOT_REGULAR.items()},
    "own_transcript": {"read_file": "Read 1/1 file", "write_file": REFUSED_DATA, "edit_file": REFUSED_DATA},
    "link_transcript": {"read_file": "Read 1/1 file", "write_file": REFUSED_DATA, "edit_file": REFUSED_DATA},
    "through_folder_link": {"read_file": "Read 1/1 file", "write_file": REFUSED_DATA, "edit_file": REFUSED_DATA},
    "surrogate": {"write_file": "cannot encode its text as UTF-8", "edit_file": "cannot encode its text as UTF-8"},
}
CHANGED = {"write_file": {"regular": b"replaced\n", "missing": b"replaced\n"},
           "edit_file": {"regular": b"IMPORTANT data\n"}}


def _state(path: Path) -> tuple[Any, ...]:
    """What a target is: its type, inode, mode, owner, and bytes or link text."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return ("missing",)
    if stat.S_ISLNK(status.st_mode):
        return ("link", os.readlink(path), status.st_ino)
    content = path.read_bytes() if stat.S_ISREG(status.st_mode) else None
    listing = sorted(os.listdir(path)) if stat.S_ISDIR(status.st_mode) else None
    return (stat.S_IFMT(status.st_mode), status.st_ino, status.st_mode, status.st_uid, content, listing)


@pytest.fixture
def targets(workdir: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """One target of each kind in `workdir`, plus a session (the one `-c` continues)."""
    assert run_cli(["-p", "hello"], workdir, home).returncode == 0
    [transcript] = transcripts(home, workdir)
    made: dict[str, Path] = {}
    for kind in ("regular", "surrogate", "regular2"):
        (workdir / f"{kind}.txt").write_text(ORIGINAL)
        made[kind] = workdir / f"{kind}.txt"
    made["missing"] = workdir / "missing.txt"
    os.mkfifo(workdir / "fifo")
    made["fifo"] = workdir / "fifo"
    monkeypatch.chdir(workdir)  # a socket path must stay under 108 bytes: bind a relative name
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("socket")
    server.listen(1)
    made["socket"] = workdir / "socket"
    os.mknod(workdir / "chardev", stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
    made["chardev"] = workdir / "chardev"
    (workdir / "folder").mkdir()
    (workdir / "folder" / "inside.txt").write_text("kept\n")
    made["folder"] = workdir / "folder"
    for kind, pointee in (("regular", made["regular2"]), ("missing", workdir / "nowhere.txt"), ("fifo", made["fifo"]),
                          ("socket", made["socket"]), ("chardev", Path("/dev/null")), ("folder", made["folder"]),
                          ("transcript", transcript)):
        (workdir / f"link_{kind}").symlink_to(pointee)
        made[f"link_{kind}"] = workdir / f"link_{kind}"
    made["own_transcript"] = transcript
    (workdir / "datalink").symlink_to(home, target_is_directory=True)
    made["through_folder_link"] = workdir / "datalink" / transcript.relative_to(home)
    try:
        yield made
    finally:
        server.close()


def _call(tool: str, kind: str, path: Path) -> str:
    if tool == "read_file":
        tool_input: dict[str, Any] = {"file_path": str(path)}
    elif tool == "write_file":
        tool_input = {"file_path": str(path), "content": "x\ud800y" if kind == "surrogate" else "replaced\n"}
    else:
        tool_input = {"file_path": str(path), "old_string": "important",
                      "new_string": "\ud800" if kind == "surrogate" else "IMPORTANT"}
    return f"call {tool} {json.dumps(tool_input)}"  # json.dumps escapes the lone surrogate as \\ud800


def _tool_results(transcript: Path) -> list[str]:
    results = []
    for entry in entries(transcript):
        for block in (entry.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results.append(block["content"][0]["text"])
    return results


@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file"])
def test_each_tool_against_each_kind_of_target(tool: str, targets: dict[str, Path], workdir: Path,
                                               home: Path) -> None:
    kinds = [kind for kind in EXPECTED if tool in EXPECTED[kind]]
    watched = {name: _state(path) for name, path in targets.items() if name not in ("own_transcript", "through_folder_link")}
    transcript = targets["own_transcript"]
    committed = transcript.read_bytes()
    prompt = "\n".join(_call(tool, kind, targets[kind]) for kind in kinds)
    # --yolo: the targets include the data dir, outside the working directory (headless needs leave)
    completed = run_cli(["-c", "-p", prompt, "--output-format", "json", "--yolo"], workdir, home, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr
    assert json.loads(completed.stdout)["is_error"] is False
    results = _tool_results(transcript)[-len(kinds):]
    assert len(results) == len(kinds), results
    wrong = {kind: result for kind, result in zip(kinds, results)
             if EXPECTED[kind][tool].format(tool=tool) not in result}
    assert wrong == {}, f"{tool}: unexpected tool results: {json.dumps(wrong, indent=1)}"
    for kind, result in zip(kinds, results):
        if EXPECTED[kind][tool] in (REFUSED_DATA, SYMLINK, *NOT_REGULAR.values()) or EXPECTED[kind][tool] == NO_SUCH:
            assert result.startswith("Error: "), (kind, result)
    changed = CHANGED.get(tool, {})
    for name, before in watched.items():
        after = _state(targets[name])
        if name in changed:
            assert targets[name].read_bytes() == changed[name], name
            if name == "regular":
                assert after[2] == before[2] and after[3] == before[3], "mode and owner are kept"
        else:
            assert after == before, f"{tool} changed {name}"
    assert transcript.read_bytes().startswith(committed), "the committed turns are kept"
    assert b"garbage" not in transcript.read_bytes() and b"replaced" not in transcript.read_bytes()[:len(committed)]
    leftovers = [name for name in os.listdir(workdir) if name.endswith(".tmp")]
    assert leftovers == [], "no temp file is left behind"


def test_a_failed_write_leaves_the_file_exactly_as_it_was(workdir: Path, home: Path) -> None:
    """The issue's example: encoding used to fail after the file was opened for writing (and
    emptied)."""
    target = workdir / "a.txt"
    target.write_text(ORIGINAL)
    target.chmod(0o640)
    for call in ('call write_file {"file_path":"a.txt","content":"x\\ud800y"}',
                 'call edit_file {"file_path":"a.txt","old_string":"data","new_string":"\\ud800"}'):
        completed = run_cli(["-p", call], workdir, home)
        assert completed.returncode == 0, completed.stderr
        assert "cannot encode its text as UTF-8" in completed.stdout and "the file was not changed" in completed.stdout
        assert target.read_text() == ORIGINAL
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(os.listdir(workdir)) == ["a.txt"]


def test_a_write_keeps_mode_and_gives_a_hard_linked_target_a_file_of_its_own(workdir: Path, home: Path) -> None:
    target = workdir / "script.sh"
    target.write_text("#!/bin/sh\necho old\n")
    target.chmod(0o751)
    other_name = workdir / "other-name.sh"
    os.link(target, other_name)
    call = 'call edit_file {"file_path":"script.sh","old_string":"old","new_string":"new"}'
    assert run_cli(["-p", call], workdir, home).returncode == 0
    assert target.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert other_name.read_text() == "#!/bin/sh\necho old\n", "the other name keeps the old bytes (documented)"
    assert target.stat().st_nlink == 1


def test_the_issue_example_writing_its_own_transcript_is_refused(workdir: Path, home: Path) -> None:
    assert run_cli(["-p", "first turn"], workdir, home).returncode == 0
    [transcript] = transcripts(home, workdir)
    before = transcript.read_bytes()
    call = f"call write_file {json.dumps({'file_path': str(transcript), 'content': 'garbage' + chr(10)})}"
    completed = run_cli(["-c", "-p", call, "--yolo"], workdir, home)  # the tool refuses it, whatever the mode
    assert completed.returncode == 0, completed.stderr
    assert REFUSED_DATA in completed.stdout
    assert transcript.read_bytes().startswith(before)
    assert run_cli(["sessions", "context", transcript.name[:8]], workdir, home).returncode == 0
    checkpoints = transcript.with_name(transcript.name.replace(".jsonl", ".checkpoints.jsonl"))
    last = json.loads(checkpoints.read_text().split("\n")[-1])
    assert last["files"] == [], "nothing inside the data dir is backed up for a refused write"


def _read_result(workdir: Path, home: Path, name: str) -> str:
    completed = run_cli(["-p", f"call read_file {json.dumps({'file_path': name})}", "--yolo"], workdir, home, timeout=120)
    assert completed.returncode == 0, completed.stderr
    [transcript] = [path for path in transcripts(home, workdir)
                    if f'"{name}"' in path.read_text()]
    return _tool_results(transcript)[-1]


def test_read_file_is_bounded_and_says_so(workdir: Path, home: Path) -> None:
    (workdir / "many.txt").write_text("".join(f"line {number}\n" for number in range(1, 3001)))
    result = _read_result(workdir, home, "many.txt")
    assert result.startswith("Read 1/1 file, first 2000 lines of 28,893 bytes (cut at the read bound of 2,000 lines;")
    assert result.endswith("2000: line 2000")
    (workdir / "wide.txt").write_bytes(b"y" * (1 << 20))
    result = _read_result(workdir, home, "wide.txt")
    assert "(cut at the read bound of" in result and "the file goes on" in result
    assert len(result) < 31_000
    (workdir / "zero").symlink_to("/dev/zero")
    assert "is a character device, not a regular file" in _read_result(workdir, home, "zero")
    (workdir / "exact.txt").write_text("".join(f"{number}\n" for number in range(2000)))
    assert _read_result(workdir, home, "exact.txt").startswith("Read 1/1 file, 2000 lines\n")


@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file"])
@pytest.mark.parametrize("name, why", [("a\\ud800b", "is not valid Unicode (a lone surrogate)"),
                                       ("a\\u0000b", "contains a NUL byte")])
def test_a_file_name_no_file_can_have_is_a_tool_error(tool: str, name: str, why: str, workdir: Path,
                                                      home: Path) -> None:
    """Used to fail the whole turn (`'utf-8' codec can't encode ...`) for the editing tools."""
    call = f'call {tool} {{"file_path": "{name}", "content": "x", "old_string": "a", "new_string": "b"}}'
    completed = run_cli(["-p", call, "--output-format", "json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr
    [transcript] = transcripts(home, workdir)
    [result] = _tool_results(transcript)
    assert result.startswith(f"Error: {tool}: the file name ") and result.endswith(why), result
    assert os.listdir(workdir) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
def test_a_write_keeps_the_owner_of_the_replaced_file(workdir: Path, home: Path) -> None:
    target = workdir / "theirs.txt"
    target.write_text(ORIGINAL)
    os.chown(target, 4321, 4322)
    target.chmod(0o4755)  # a set-id bit survives the chown that gives the new file back
    for call in ('call write_file {"file_path": "theirs.txt", "content": "replaced\\n"}',
                 'call edit_file {"file_path": "theirs.txt", "old_string": "replaced", "new_string": "edited"}'):
        assert run_cli(["-p", call], workdir, home).returncode == 0
        status = target.stat()
        assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (4321, 4322, 0o4755)
    assert target.read_text() == "edited\n"
