"""Worktree isolation against a real repository and worktree: every redirect form into the main
checkout is refused with a message saying how to rewrite it, unverifiable targets are refused,
and calls that stay in the worktree (or outside the repository) pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commandcode.workspace.isolation import check_tool_call
from commandcode.workspace.worktrees import Worktree, create_worktree, worktree_of
from helpers.cli import only_transcript, run_cli
from helpers.workspace import git, git_repo


@pytest.fixture
def tree(tmp_path: Path, home: Path) -> Worktree:
    repo = git_repo(tmp_path / "repo")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print(1)\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "src")
    return create_worktree(repo, "feature")


def _bash(tree: Worktree, command: str) -> str | None:
    return check_tool_call("bash", {"command": command}, tree.path, tree)


@pytest.mark.parametrize("command, fragment", [
    ("cd {main} && rm -rf src", "cd {worktree}"),
    ("cd ../../.. && ls", "cd {worktree}"),
    ("pushd {main}/src", "cd {worktree}/src"),
    ("git -C {main} status", "git -C {worktree}"),
    ("git -C{main} log", "git -C {worktree}"),
    ("git --git-dir={main}/.git log", "without --git-dir"),
    ("git --git-dir {main}/.git log", "without --git-dir"),
    ("git --work-tree={main} checkout -- .", "without --work-tree"),
    ("git --work-tree {main} status", "without --work-tree"),
    ("GIT_DIR={main}/.git git log", "Drop GIT_DIR"),
    ("GIT_WORK_TREE={main} git status", "Drop GIT_WORK_TREE"),
    ("export GIT_DIR={main}/.git; git log", "Drop GIT_DIR"),
    ("env GIT_WORK_TREE={main} git status", "Drop GIT_WORK_TREE"),
    ("cat {main}/src/app.py", "{worktree}/src/app.py"),
    ("echo hi > ../../../README.md", "{worktree}/README.md"),
    ("ls; (cd {main}; make)", "cd {worktree}"),
    ("sh -c 'cd {main} && git status'", "cd {worktree}"),
])
def test_every_redirect_form_is_refused_with_a_rewrite(tree: Worktree, command: str, fragment: str) -> None:
    main, worktree = tree.main_root, tree.path
    refusal = _bash(tree, command.format(main=main, worktree=worktree))
    assert refusal is not None, command
    assert refusal.startswith("Error: ") and f"main checkout ({main})" in refusal
    assert fragment.format(main=main, worktree=worktree) in refusal, refusal


@pytest.mark.parametrize("command", [
    "cd $HOME_REPO && ls", "cd \"$(git rev-parse --show-toplevel)/..\"", "cd -", "git -C $OTHER status",
    "GIT_DIR=$X git log", "eval \"git -C $X status\"", "git -C `pwd` log", "cd 'unbalanced",
])
def test_unverifiable_targets_are_refused(tree: Worktree, command: str) -> None:
    refusal = _bash(tree, command)
    assert refusal is not None and "cannot verify" in refusal, (command, refusal)


@pytest.mark.parametrize("command", [
    "git status", "git commit -qm wip", "ls src && cat src/app.py", "cd src && ls", "echo $HOME",
    "cat /etc/hostname", "git log origin/main", "cd /tmp && ls", "git -C . status",
])
def test_calls_that_stay_in_the_worktree_pass(tree: Worktree, command: str) -> None:
    assert _bash(tree, command) is None, command


def test_file_tools(tree: Worktree, tmp_path: Path) -> None:
    main, worktree = tree.main_root, tree.path
    for name in ("read_file", "write_file", "edit_file"):
        refusal = check_tool_call(name, {"file_path": str(main / "src" / "app.py")}, worktree, tree)
        assert refusal is not None and f"{worktree}/src/app.py" in refusal
        assert check_tool_call(name, {"file_path": "src/app.py"}, worktree, tree) is None
        assert check_tool_call(name, {"file_path": str(tmp_path / "elsewhere.txt")}, worktree, tree) is None
    relative = check_tool_call("write_file", {"file_path": "../../../new.txt"}, worktree, tree)
    assert relative is not None and "new.txt" in relative
    (worktree / "escape").symlink_to(main / "src")
    through_link = check_tool_call("edit_file", {"file_path": "escape/app.py"}, worktree, tree)
    assert through_link is not None, "a symlink out of the worktree must not be a way in"


def test_a_shell_started_in_the_main_checkout_is_refused(tree: Worktree) -> None:
    refusal = check_tool_call("bash", {"command": "ls"}, tree.main_root / "src", tree)
    assert refusal is not None and "working directory" in refusal


def test_outside_a_worktree_nothing_is_checked(tree: Worktree) -> None:
    assert check_tool_call("bash", {"command": f"cd {tree.main_root}"}, tree.main_root, None) is None
    assert worktree_of(tree.main_root) is None
    found = worktree_of(tree.path / "src") if (tree.path / "src").is_dir() else worktree_of(tree.path)
    assert found is not None and found.name == "feature"


def test_a_real_turn_in_a_worktree_is_refused_and_changes_nothing(tree: Worktree, home: Path) -> None:
    target = tree.main_root / "src" / "app.py"
    before = target.read_bytes()
    call = json.dumps({"file_path": str(target), "content": "hacked\n"})
    completed = run_cli(["-p", f"call write_file {call}", "--output-format", "json"], tree.path, home)
    assert completed.returncode == 0, completed.stderr
    assert target.read_bytes() == before
    transcript = only_transcript(home, tree.path)
    assert "reaches the main checkout" in transcript.read_text()
    assert '"files":[]' in transcript.with_name(transcript.stem + ".checkpoints.jsonl").read_text()  # nothing backed up
    shell = json.dumps({"command": f"git -C {tree.main_root} commit --allow-empty -qm x"})
    run_cli(["-p", f"call bash {shell}", "--yolo"], tree.path, home)  # the guard holds even in bypass mode
    assert git(tree.main_root, "rev-list", "--count", "HEAD").strip() == "2"


def test_a_folder_outside_every_session_worktree_runs_no_git(tree: Worktree, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each turn asks which worktree its folder is in: a folder no session worktree can hold is
    answered from its path, without starting `git`; one inside still gets its worktree."""
    from commandcode.workspace import worktrees

    started: list[list[str]] = []
    real = worktrees._git

    def counting(arguments: list[str], *args: object, **kwargs: object) -> object:
        started.append(arguments)
        return real(arguments, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(worktrees, "_git", counting)
    assert worktree_of(tree.main_root / "src") is None
    assert started == []
    found = worktree_of(tree.path)
    assert found is not None and found.name == "feature" and started
