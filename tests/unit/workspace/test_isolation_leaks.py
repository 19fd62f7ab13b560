"""Worktree isolation through real processes: `commandcode -w feat --yolo -p 'call bash {...}'`
runs a matrix of commands that write into the main checkout by a path the text does not spell
out (a variable, a substitution, xargs, find -exec, eval, a glob, a changed HOME...). Each is first
shown to leak when dash runs it unchecked in a scratch repository; through commandcode none may
leave a file in the main checkout, while writes inside the worktree still happen. A launch that
fails leaves no worktree and no branch behind."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from commandcode.workspace.worktrees import create_worktree
from helpers.cli import run_cli
from helpers.workspace import git, git_repo

# Each writes the file named after its position into the main checkout, run from the worktree.
LEAKS = [
    "a=..; echo x > $a/$a/$a/{m}",  # the examples
    "find \"$(git rev-parse --git-common-dir)/..\" -maxdepth 0 -exec touch {{}}/{m} \\;",
    "touch \"$(git rev-parse --show-toplevel)/../../../{m}\"",
    "cp /etc/hostname \"$(git rev-parse --git-common-dir)/../{m}\"",
    "d=$(git rev-parse --git-common-dir); echo x > $d/../{m}",
    "git rev-parse --git-common-dir | xargs -I{{}} touch {{}}/../{m}",
    "for d in $(git rev-parse --git-common-dir); do touch $d/../{m}; done",
    "sh -c 'echo x > \"$0/{m}\"' \"$(git rev-parse --git-common-dir)/..\"",
    "eval \"echo x > \\$(git rev-parse --git-common-dir)/../{m}\"",
    "echo x | tee \"$(git rev-parse --git-common-dir)/../{m}\" >/dev/null",
    "HOME=../../..; echo x > ~/{m}",
    "exec 3>../../../{m}; echo x >&3",
    "dd if=/etc/hostname of=$(git rev-parse --git-common-dir)/../{m} 2>/dev/null",
    "cd ..*/..*/..* && touch {m}",
    "ls -d ..*/..*/..* | xargs -I{{}} touch {{}}/{m}",
    "echo x > \"${{GIT_DIR:-../../..}}/{m}\"",
    "set -- ../../..; touch \"$1/{m}\"",
    "echo x > `git rev-parse --git-common-dir`/../{m}",
    "(cd ..; cd ..; cd ..; touch {m})",
    "f() {{ cd ..; }}; f; f; f; touch {m}",
    "i=0; while [ $i -lt 3 ]; do cd ..; i=$((i+1)); done; touch {m}",
    "mkdir -p x && cd x && cd ../../../.. && touch {m}",
    "ln -s ../../.. up && touch up/{m}",
    "cat <<EOF > $(git rev-parse --git-common-dir)/../{m}\nx\nEOF",
    "printf x > \"$PWD/../../../{m}\"",
    "env -C ../../.. touch {m}",
    "mkdir -p a/b && ln -s ../../../../.. a/b/up && touch a/b/up/{m}",
    "CDPATH=$(git rev-parse --git-common-dir)/..; cd .commandcode >/dev/null && touch ../{m}",
    "export CDPATH=/nonexistent:../../..; cd .commandcode >/dev/null && touch ../{m}",
    "python3 -c \"open('../../../{m}', 'w')\"",
    "python3 -c \"import os; open(os.path.join('..', '..', '..', '{m}'), 'w')\"",
    "awk 'BEGIN {{ print 1 > \"../../../{m}\" }}'",
    "echo x > in.txt && sort in.txt -o../../../{m}",
]
INSIDE = ["echo ok > inside1", "mkdir -p build && echo x > build/inside2", "for f in a b; do echo $f; done > inside3",
          "git status --short > inside4", "echo $HOME > inside5"]


def _names() -> list[str]:
    return [f"m{index}" for index in range(len(LEAKS))]


def _leaked(main: Path, worktree: Path) -> list[str]:
    return sorted(path.name for path in main.rglob("m*")
                  if path.name in _names() and worktree not in path.parents and path.parent != worktree)


def test_every_leak_writes_into_the_main_checkout_when_unchecked(tmp_path: Path, home: Path) -> None:
    """The matrix is real: dash, run from a worktree, writes each file into the main checkout."""
    main = git_repo(tmp_path / "scratch")
    tree = create_worktree(main, "feat")
    for command, name in zip(LEAKS, _names(), strict=True):
        subprocess.run(["/bin/sh", "-c", command.format(m=name)], cwd=tree.path, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
        found = [path for path in main.rglob(name) if tree.path not in path.parents]
        assert found, f"{command!r} did not write into the main checkout"


def test_no_bash_call_of_a_worktree_session_writes_into_the_main_checkout(tmp_path: Path, home: Path) -> None:
    main = git_repo(tmp_path / "repo")
    calls = [*(command.format(m=name) for command, name in zip(LEAKS, _names(), strict=True)), *INSIDE]
    prompt = "\n".join(f"call bash {json.dumps({'command': command})}" for command in calls)
    completed = run_cli(["-w", "feat", "--yolo", "-p", prompt, "--output-format", "json"], main, home, timeout=180)
    assert completed.returncode == 0, completed.stderr
    worktree = main / ".commandcode" / "worktrees" / "feat"
    assert _leaked(main, worktree) == []
    assert git(main, "status", "--porcelain", "--untracked-files=all").strip() == ""
    assert all((worktree / name).exists() for name in ("inside1", "build/inside2", "inside3", "inside4", "inside5"))
    result = json.dumps(json.loads(completed.stdout))
    assert result.count("cannot verify from the command text") + result.count("reaches the main checkout") >= len(LEAKS)


def test_a_failed_launch_leaves_no_worktree_or_branch(tmp_path: Path, home: Path) -> None:
    main = git_repo(tmp_path / "repo")
    before = (git(main, "worktree", "list", "--porcelain"), git(main, "branch", "--list"))
    for args in (["-w", "-rf", "-p", "hi"], ["-w", "named", "-r", "no-such-session", "-p", "hi"]):
        completed = run_cli(args, main, home)
        assert completed.returncode != 0 and "Traceback" not in completed.stderr
        assert (git(main, "worktree", "list", "--porcelain"), git(main, "branch", "--list")) == before, args
        folder = main / ".commandcode" / "worktrees"
        assert not folder.exists() or not any(folder.iterdir()), list(folder.iterdir())
    kept = create_worktree(main, "kept")  # a worktree that already existed is reused, and stays
    completed = run_cli(["-w", "kept", "-r", "no-such-session", "-p", "hi"], main, home)
    assert completed.returncode != 0 and kept.path.is_dir()
    assert "worktree-kept" in git(main, "branch", "--list")


@pytest.mark.terminal  # a real pseudo-terminal (ShellSession)
def test_a_failed_interactive_launch_leaves_no_worktree_or_branch(tmp_path: Path, home: Path) -> None:
    from helpers.terminal import ShellSession

    main = git_repo(tmp_path / "repo")
    before = (git(main, "worktree", "list", "--porcelain"), git(main, "branch", "--list"))
    session = ShellSession(main, home, ["-w", "-r", "no-such-session"])
    assert session.wait_exit() != 0
    assert "no-such-session" in session.text() and "Traceback" not in session.text()
    assert (git(main, "worktree", "list", "--porcelain"), git(main, "branch", "--list")) == before
