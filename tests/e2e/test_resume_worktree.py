"""Resuming a session that worked in a session worktree, from the main checkout, in a real pty:
it resumes in its worktree (the shell says so, and a `pwd` tool call runs there), not silently in
the main checkout; when its worktree was removed on exit, the hint printed then is followed and
the resume says clearly that the worktree is gone and where it runs instead."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from helpers.cli import wait_for
from helpers.terminal import shell_session

pytestmark = pytest.mark.terminal


def _repository(folder: Path) -> None:
    subprocess.run("git init -q && git config user.email t@example.com && git config user.name t && "
                   "echo x > f && git add f && git commit -qm init", shell=True, cwd=folder, check=True)


def _pwd_in_shell(shell: object, out: Path) -> str:
    shell.exchange("call bash " + json.dumps({"command": f"pwd > {out}"}), "Allow bash")  # type: ignore[attr-defined]
    shell.send("1")  # type: ignore[attr-defined]
    wait_for(out.exists, what="the pwd tool call")
    return out.read_text().strip()


def _session_id(home: Path) -> str:
    return next(path.stem for path in (home / "projects").rglob("*.jsonl") if "." not in path.stem)


def test_a_worktree_session_resumed_from_the_main_checkout_runs_in_its_worktree(home: Path, workdir: Path,
                                                                                tmp_path: Path) -> None:
    _repository(workdir)
    shell = shell_session(workdir, home, ["-w", "feat"], columns=200)
    tree = workdir / ".commandcode" / "worktrees" / "feat"
    assert _pwd_in_shell(shell, tmp_path / "first.txt") == str(tree)
    shell.line("/exit")
    shell.wait_screen("kept the worktree")  # a named worktree stays
    assert shell.wait_exit() == 0
    again = shell_session(workdir, home, ["-r", _session_id(home)], columns=200)
    again.wait_words(f"resuming in the session's worktree {tree} (branch worktree-feat)")
    assert _pwd_in_shell(again, tmp_path / "second.txt") == str(tree)  # not the main checkout
    again.line("/exit")
    assert again.wait_exit() == 0


def test_a_session_whose_worktree_was_removed_says_so_where_the_hint_sends_it(home: Path, workdir: Path,
                                                                             tmp_path: Path) -> None:
    _repository(workdir)
    shell = shell_session(workdir, home, ["-w"], columns=200)
    shell.exchange("just a question", "You said")
    shell.line("/exit")
    session = _session_id(home)
    shell.wait_words("its worktree was removed", f"cd {workdir} && commandcode -r {session}")
    assert shell.wait_exit() == 0
    assert not any((workdir / ".commandcode" / "worktrees").iterdir())
    again = shell_session(workdir, home, ["-r", session], columns=200)  # what the hint says
    again.wait_words("which has been removed", "this session worked in the worktree", f"it resumes here in {workdir}",
                     "git -C", "log worktree-")
    assert _pwd_in_shell(again, tmp_path / "where.txt") == str(workdir)
    again.line("/exit")
    assert again.wait_exit() == 0


def test_resume_from_the_picker_in_the_main_checkout_says_it_runs_in_the_worktree(home: Path, workdir: Path,
                                                                                tmp_path: Path) -> None:
    _repository(workdir)
    shell = shell_session(workdir, home, ["-w", "feat", "-n", "feature work"], columns=200)
    shell.exchange("a prompt in the worktree", "You said")
    shell.line("/exit")
    assert shell.wait_exit() == 0
    main = shell_session(workdir, home, columns=200)
    main.exchange("a prompt in the main checkout", "You said")
    main.line("/resume")
    main.wait_screen("session(s) in this directory")
    main.send("\x17")  # Ctrl+W: every worktree of the repository
    main.wait_screen("feature work")
    main.send("feature work")
    main.wait_screen("1 session(s) in every worktree")
    main.send("\r")
    tree = workdir / ".commandcode" / "worktrees" / "feat"
    main.wait_words("resumed feature work", f"resuming in the session's worktree {tree} (branch worktree-feat)",
                    "where it was working")
    assert _pwd_in_shell(main, tmp_path / "where.txt") == str(tree)
    main.line("/exit")
    assert main.wait_exit() == 0
