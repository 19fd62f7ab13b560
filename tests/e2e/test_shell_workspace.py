"""The interactive shell and the workspace, driven like a user in a real pty with real git
repositories: `commandcode -w [NAME]` starts the shell inside a new session worktree; on exit a
clean worktree with a generated name goes with its branch, one holding work asks (and only
choosing removal removes it), a named clean one stays; and the shell starts the daily sweep in
the background (archiving), at most once a day."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from helpers.cli import run_cli, transcripts, wait_for
from helpers.terminal import CTRL_D, ShellSession, shell_session
from helpers.workspace import age_session, git, git_repo, make_session

pytestmark = pytest.mark.terminal


def _worktrees(repo: Path) -> list[Path]:
    folder = repo / ".commandcode" / "worktrees"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").split()


def test_a_bare_w_starts_the_shell_in_a_generated_worktree_removed_clean_on_exit(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    shell = shell_session(repo, home, ["-w"])
    try:
        shell.wait_output("working in the worktree")
        [tree] = _worktrees(repo)
        shell.wait_output(str(tree))  # the path, whole (the terminal may wrap it)
        shell.exchange("hello from the worktree", "Offline model reply")
        assert "disk" in shell.exchange("/status", " transcript · ")  # the session's footprint line
        assert "worktree-" + tree.name in _branches(repo)
        shell.line("/exit")
        shell.wait_screen(f"removed the worktree {tree.name}")
        # the resume hint says where a resume can run now that its folder is gone
        shell.wait_words("its worktree was removed", f"cd {repo} && commandcode -r ")  # wrapped at words
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    assert _worktrees(repo) == [] and _branches(repo) == ["main"]
    [transcript] = transcripts(home)
    assert json.loads(transcript.read_text().splitlines()[0])["cwd"] == str(tree)  # the session ran in it


def test_a_named_clean_worktree_stays(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    shell = shell_session(repo, home, ["-w", "feature"])
    try:
        shell.wait_output("working in the worktree")
        shell.send(CTRL_D)
        shell.wait_screen("kept the worktree")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    assert [tree.name for tree in _worktrees(repo)] == ["feature"] and "worktree-feature" in _branches(repo)


@pytest.mark.parametrize("answer", ["", "2"])
def test_a_worktree_holding_work_asks_and_only_removal_removes(home: Path, tmp_path: Path, answer: str) -> None:
    repo = git_repo(tmp_path / "repo")
    shell = shell_session(repo, home, ["-w", "--yolo"])
    try:
        shell.wait_output("working in the worktree")
        shell.exchange('call write_file {"file_path": "new.txt", "content": "work\\n"}', "Ran 1 tool call(s)")
        [tree] = _worktrees(repo)
        assert (tree / "new.txt").read_text() == "work\n" and not (repo / "new.txt").exists()
        shell.line("/exit")
        shell.wait_screen("has 1 changed or untracked file")
        shell.wait_screen("Remove it and its branch")
        shell.line(answer)
        shell.wait_screen("kept the worktree" if answer == "" else f"removed the worktree {tree.name}")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    if answer == "":
        assert (tree / "new.txt").read_text() == "work\n" and "worktree-" + tree.name in _branches(repo)
    else:
        assert _worktrees(repo) == [] and _branches(repo) == ["main"]


def test_ctrl_d_at_the_question_keeps_the_work(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    shell = shell_session(repo, home, ["-w", "--yolo"])
    try:
        shell.wait_output("working in the worktree")
        shell.exchange('call bash {"command": "echo x > f.txt && git add f.txt && git commit -qm f"}', "Ran 1 tool call(s)")
        shell.line("/exit")
        shell.wait_screen("1 commit")
        shell.send(CTRL_D)
        shell.wait_screen("kept the worktree")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    [tree] = _worktrees(repo)
    assert (tree / "f.txt").exists()


@pytest.mark.parametrize(("make", "message", "code"), [("plain", "not a git repository", 1), ("empty", "no commits", 1),
                                                        ("name", "worktree name", 2)])
def test_w_refusals_are_one_line_and_create_nothing(home: Path, tmp_path: Path, make: str, message: str,
                                                    code: int) -> None:
    folder = tmp_path / "here"
    folder.mkdir()
    args = ["-w"]
    if make == "empty":
        git_repo(folder, commit=False)
    elif make == "name":
        git_repo(folder)
        args = ["-w", "../escape"]
    shell = ShellSession(folder, home, args)
    try:
        screen = shell.wait_screen("error: ")
        assert shell.wait_exit() == code
        assert message in screen.lower() and "Traceback" not in shell.raw.decode(errors="replace")
    finally:
        shell.close()
    assert not (folder / ".commandcode").exists() and not (tmp_path / "escape").exists()
    assert transcripts(home) == []


def test_the_shell_starts_the_daily_sweep_in_the_background(home: Path, workdir: Path) -> None:
    old = make_session(home, workdir)
    age_session(old, 40)
    shell = shell_session(workdir, home)
    try:
        wait_for(lambda: not old.exists() and any((home / "archives").rglob("*.ccarchive")), what="the background sweep")
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    stamp = home / "sweep" / "last-auto-sweep"
    assert stamp.exists()
    second = make_session(home, workdir)
    age_session(second, 40)
    shell = shell_session(workdir, home)  # the same day: no second sweep
    try:
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    time.sleep(1.0)  # a sweep it had started would have to begin in this time; it must not have
    assert second.exists()
    long_ago = time.time() - 2 * 86400
    os.utime(stamp, (long_ago, long_ago))  # a day later: the next start sweeps again
    shell = shell_session(workdir, home)
    try:
        wait_for(lambda: not second.exists(), what="the next day's sweep")
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()


def test_a_saved_answer_in_a_worktree_lands_in_the_main_checkout(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    shell = shell_session(repo, home, ["-w", "feature"])
    try:
        shell.wait_output("working in the worktree")
        shell.exchange('call bash {"command": "echo hi > made.txt"}', "Allow bash")
        shell.send("5")  # "Yes, and don't ask again for this exact command"
        shell.wait_screen("Ran 1 tool call(s)")
        shell.line("/exit")
        shell.wait_screen("Remove it and its branch")  # it holds made.txt: asked; Enter keeps it
        shell.line("")
        shell.wait_screen("kept the worktree")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    [tree] = _worktrees(repo)
    saved = json.loads((repo / ".commandcode" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["Bash(echo hi > made.txt)"]
    assert not (tree / ".commandcode" / "settings.local.json").exists()
    # ... and it applies there: the same command runs headless in the worktree without a question.
    completed = run_cli(["-p", 'call bash {"command": "echo hi > made.txt"}', "--output-format", "json"], tree, home)
    assert completed.returncode == 0 and "permission needed" not in json.loads(completed.stdout)["result"]
