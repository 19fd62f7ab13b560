"""A code rewind puts back the symlinks, FIFOs and empty folders a `bash` command created, removed
or put in a file's place (issue 26 §4), through real processes: one `-p --yolo` turn on the
offline model runs the command, then `rewind --to 1 --mode code` must leave the exact tree the
checkpoint saw (lstat type, link target, contents, mode), never writing through a link. Every
case failed on 55fdfa8 (shell tracking knew regular files only)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers.checkpoints import lstat_tree as tree
from helpers.cli import only_transcript, run_ok


def _bash(command: str) -> str:
    return "call bash " + json.dumps({"command": command})


def _setup_base(project: Path) -> None:
    (project / "a.txt").write_text("a\n")
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("print(1)\n")


_BIND = "python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('{}')\""  # leaves the socket's name


def _bind(path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))


Case = tuple[Callable[[Path, Path], None], Callable[[Path, Path], str]]

# name -> (what exists before the turn, the command); `outside` is a folder next to the project
CASES: dict[str, Case] = {
    "created_symlink_inside": (lambda p, o: None, lambda p, o: "ln -s a.txt link"),
    "created_symlink_outside": (lambda p, o: None, lambda p, o: f"ln -s {o / 'secret'} out"),
    "created_symlink_dangling": (lambda p, o: None, lambda p, o: "ln -s nowhere/at/all dangling"),
    "created_fifo": (lambda p, o: None, lambda p, o: "mkfifo src/pipe && chmod 640 src/pipe"),
    "created_empty_folder": (lambda p, o: None, lambda p, o: "mkdir empty"),
    "created_nested_empty_folders": (lambda p, o: None, lambda p, o: "mkdir -p deep/er/est src/x/y"),
    "removed_symlink": (lambda p, o: os.symlink("a.txt", p / "link"), lambda p, o: "rm link"),
    "removed_fifo": (lambda p, o: os.mkfifo(p / "pipe", 0o600), lambda p, o: "rm pipe"),
    "removed_empty_folder": (lambda p, o: (p / "keep" / "inner").mkdir(parents=True), lambda p, o: "rm -r keep"),
    "file_replaced_by_symlink": (lambda p, o: (p / "f.txt").write_text("mine\n"),
                                 lambda p, o: f"rm f.txt && ln -s {o / 'secret'} f.txt"),
    "symlink_replaced_by_file": (lambda p, o: os.symlink("a.txt", p / "s"), lambda p, o: "rm s && echo new > s"),
    "folder_replaced_by_file": (lambda p, o: (p / "d").mkdir(), lambda p, o: "rmdir d && echo x > d"),
    "fifo_replaced_by_symlink": (lambda p, o: os.mkfifo(p / "q", 0o600), lambda p, o: "rm q && ln -s a.txt q"),
    "created_socket": (lambda p, o: None, lambda p, o: _BIND.format("src/app.sock")),
    "removed_socket": (lambda p, o: _bind(p / "old.sock"), lambda p, o: "rm old.sock"),
    "file_replaced_by_socket": (lambda p, o: (p / "s.txt").write_text("mine\n"),
                                lambda p, o: "rm s.txt && " + _BIND.format("s.txt")),
}


def _outside(workdir: Path) -> Path:
    outside = workdir.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret").write_text("secret\n")
    return outside


def _run_case(home: Path, workdir: Path, prepare: Callable[[Path, Path], None], command: str) -> None:
    outside = _outside(workdir)
    before, outside_before = tree(workdir), tree(outside)
    run_ok(["-p", _bash(command), "--yolo"], workdir, home)
    assert tree(workdir) != before, f"the command changed nothing: {command}"
    session = only_transcript(home, workdir).name[: -len(".jsonl")]
    run_ok(["rewind", session, "--to", "1", "--mode", "code", "--yes"], workdir, home)
    assert tree(workdir) == before
    assert tree(outside) == outside_before, "a rewind wrote through a link"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_rewind_puts_back_each_kind_of_item(name: str, home: Path, workdir: Path) -> None:
    prepare, command = CASES[name]
    _setup_base(workdir)
    outside = _outside(workdir)
    prepare(workdir, outside)
    _run_case(home, workdir, prepare, command(workdir, outside))


@pytest.mark.parametrize("repository", [False, True], ids=["plain", "git"])
def test_one_command_doing_everything_is_undone_whole_and_redone(home: Path, workdir: Path, repository: bool) -> None:
    """Every case at once, in a plain folder and in a git repository (where the items git
    ignores are left alone, as ignored files are); then `--redo` brings the command's tree back."""
    _setup_base(workdir)
    outside = _outside(workdir)
    for name in sorted(CASES):
        case = workdir / name
        case.mkdir()
        _setup_base(case)
        CASES[name][0](case, outside)
    if repository:
        subprocess.run(["git", "init", "-q", str(workdir)], check=True)
        (workdir / ".gitignore").write_text("ignored/\n")
        (workdir / "ignored").mkdir()
        subprocess.run(["git", "-C", str(workdir), "add", "-A"], check=True)
    command = " && ".join(f"(cd {name} && {CASES[name][1](workdir / name, outside)})" for name in sorted(CASES))
    if repository:
        command += " && ln -s ../a.txt ignored/link && mkdir ignored/empty"
    before, outside_before = tree(workdir), tree(outside)
    run_ok(["-p", _bash(command), "--yolo"], workdir, home)
    after = tree(workdir)
    for name in CASES:  # every part of the command ran
        assert {k: v for k, v in after.items() if k.startswith(name + "/")} != \
            {k: v for k, v in before.items() if k.startswith(name + "/")}, name
    if repository:
        assert after["ignored/link"] == ("symlink", "../a.txt")
    session = only_transcript(home, workdir).name[: -len(".jsonl")]
    run_ok(["rewind", session, "--to", "1", "--mode", "code", "--yes"], workdir, home)
    undone = tree(workdir)
    if repository:  # ignored by git: not tracked, left as the command made them
        assert undone.pop("ignored/link") == ("symlink", "../a.txt") and undone.pop("ignored/empty")[0] == "folder"
    assert undone == before
    assert tree(outside) == outside_before
    run_ok(["rewind", session, "--redo", "--yes"], workdir, home)
    assert tree(workdir) == after
    listed = run_ok(["checkpoints", "list", session, "--json"], workdir, home)
    assert listed.returncode == 0


def test_the_records_stay_readable_by_the_real_cli_rules(home: Path, workdir: Path) -> None:
    """Every item naming a symlink, FIFO or folder carries `skipped` (the real CLI leaves skipped
    items alone: it never deletes a folder or writes through a link) and `hash: null`."""
    _setup_base(workdir)
    os.symlink("a.txt", workdir / "old")
    run_ok(["-p", _bash("rm old && mkdir new && ln -s src s && mkfifo p && rm a.txt && ln -s /etc a.txt"), "--yolo"],
           workdir, home)
    checkpoints = only_transcript(home, workdir).with_name(
        only_transcript(home, workdir).name.replace(".jsonl", ".checkpoints.jsonl"))
    (record,) = [json.loads(line) for line in checkpoints.read_text().splitlines() if not line.startswith("#")]
    items = {Path(item["path"]).name: item for item in record["files"]}
    assert items["old"]["kind"] == "symlink" and items["old"]["link"] == "a.txt" and items["old"]["hash"] is None
    assert items["new"]["afterKind"] == "folder" and items["new"]["skipped"] == "not_regular"
    assert items["s"]["afterKind"] == "symlink" and items["s"]["afterLink"] == "src" and items["s"]["skipped"] == "symlink"
    assert items["p"]["afterKind"] == "fifo"
    assert items["a.txt"]["hash"] is not None and items["a.txt"]["afterLink"] == "/etc" and items["a.txt"]["skipped"] == "symlink"
    assert all("skipped" in item for item in items.values())


def test_a_device_node_is_named_in_a_warning_and_left_alone(home: Path, workdir: Path) -> None:
    """A rewind cannot make a device node again without root: the turn that made one warns in one
    line and goes on, its other changes are tracked, and a rewind leaves the node and never fails."""
    _setup_base(workdir)
    probe = workdir.parent / "probe-null"
    try:
        os.mknod(probe, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root here")
    probe.unlink()
    completed = run_ok(["-p", _bash("mknod null c 1 3 && echo more >> a.txt"), "--yolo"], workdir, home)
    output = completed.stdout + completed.stderr
    warnings = [line for line in output.splitlines() if "device node" in line]
    assert len(warnings) == 1 and str(workdir / "null") in warnings[0], output
    assert "Traceback" not in output
    session = only_transcript(home, workdir).name[: -len(".jsonl")]
    run_ok(["rewind", session, "--to", "1", "--mode", "code", "--yes"], workdir, home)
    assert (workdir / "a.txt").read_text() == "a\n"
    assert stat.S_ISCHR(os.lstat(workdir / "null").st_mode)
