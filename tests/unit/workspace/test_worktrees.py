"""Session worktrees against real repositories: where they go and which branch, baseRef, unsafe
names, no commits, not a repository, .worktreeinclude, info/exclude, the exit rules, settings_root,
and the `worktrees` and `-w` commands."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from commandcode.errors import CommandcodeError, UsageError
from commandcode.workspace.worktrees import (
    changes,
    create_worktree,
    finish_worktree,
    list_worktrees,
    remove_worktree,
    settings_root,
)
from helpers.cli import assert_error_lines, only_transcript, run_cli
from helpers.workspace import git, git_repo


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    return git_repo(tmp_path / "repo")


def _branches(repo: Path) -> set[str]:
    return set(git(repo, "branch", "--format=%(refname:short)").split())


def test_a_named_worktree_branches_from_the_default_branch(repo: Path) -> None:
    main_commit = git(repo, "rev-parse", "main").strip()
    git(repo, "checkout", "-q", "-b", "topic")
    (repo / "topic.txt").write_text("t\n")
    git(repo, "add", "topic.txt")
    git(repo, "commit", "-q", "-m", "topic")
    tree = create_worktree(repo, "feature-auth")
    assert tree.path == repo / ".commandcode" / "worktrees" / "feature-auth"
    assert tree.branch == "worktree-feature-auth" and not tree.generated
    assert git(tree.path, "rev-parse", "HEAD").strip() == main_commit
    assert not (tree.path / "topic.txt").exists()
    assert "/.commandcode/worktrees/" in (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert git(repo, "status", "--porcelain") == ""  # the main checkout does not see its worktrees
    assert create_worktree(repo, "feature-auth") == list_worktrees(repo)[0]  # again: the same one
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.commandcode/worktrees/") == 1


def test_base_ref_head_takes_the_current_commit(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "topic")
    (repo / "topic.txt").write_text("t\n")
    git(repo, "add", "topic.txt")
    git(repo, "commit", "-q", "-m", "topic")
    (repo / ".commandcode").mkdir()
    (repo / ".commandcode" / "settings.json").write_text(json.dumps({"worktree": {"baseRef": "head"}}))
    tree = create_worktree(repo / ".commandcode", "carry")
    assert (tree.path / "topic.txt").read_text() == "t\n"


def test_a_generated_name(repo: Path) -> None:
    tree = create_worktree(repo)
    assert tree.generated and tree.branch == f"worktree-{tree.name}"
    assert list_worktrees(repo)[0].generated


@pytest.mark.parametrize("name", ["a/b", "..", "../x", "x..y", ".hidden", "-rf", "a b", "x.lock", "é", "a" * 64])
def test_unsafe_names_are_refused(repo: Path, name: str) -> None:
    with pytest.raises(UsageError):
        create_worktree(repo, name)
    assert not (repo / ".commandcode").exists()


def test_no_commits_and_not_a_repository(tmp_path: Path, home: Path) -> None:
    empty = git_repo(tmp_path / "empty", commit=False)
    with pytest.raises(CommandcodeError, match="has no commits yet"):
        create_worktree(empty, "x")
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(CommandcodeError, match="not a git repository"):
        create_worktree(plain, "x")
    assert list(plain.iterdir()) == []


def test_worktreeinclude_copies_only_ignored_files_it_names(repo: Path) -> None:
    (repo / ".gitignore").write_text(".env\nlocal/\n*.log\n")
    (repo / ".worktreeinclude").write_text(".env\nlocal/\n")
    (repo / ".env").write_text("SECRET=1\n")
    os.chmod(repo / ".env", 0o600)
    (repo / "local").mkdir()
    (repo / "local" / "config.json").write_text("{}\n")
    (repo / "debug.log").write_text("noise\n")
    (repo / "untracked-not-ignored.txt").write_text("x\n")
    git(repo, "add", ".gitignore", ".worktreeinclude")
    git(repo, "commit", "-q", "-m", "ignore")
    tree = create_worktree(repo, "inc")
    assert (tree.path / ".env").read_text() == "SECRET=1\n"
    assert (tree.path / ".env").stat().st_mode & 0o777 == 0o600
    assert (tree.path / "local" / "config.json").read_text() == "{}\n"
    assert not (tree.path / "debug.log").exists()
    assert not (tree.path / "untracked-not-ignored.txt").exists()


def test_exit_rules(repo: Path) -> None:
    generated = create_worktree(repo)
    assert finish_worktree(generated, headless=True) == "kept"
    assert finish_worktree(generated, headless=False) == "removed"
    assert not generated.path.exists() and generated.branch not in _branches(repo)
    named = create_worktree(repo, "named")
    assert finish_worktree(named, headless=False) == "kept"  # a clean named worktree stays
    busy = create_worktree(repo)
    (busy.path / "new.txt").write_text("work\n")
    questions: list[str] = []
    assert finish_worktree(busy, headless=False, keep=lambda question: questions.append(question) or True) == "kept"
    assert questions and "1 changed or untracked file" in questions[0]
    git(busy.path, "add", "new.txt")
    git(busy.path, "commit", "-q", "-m", "work")  # the shared .git: commits work from inside
    assert changes(busy) == ["1 commit"]
    assert finish_worktree(busy, headless=False, keep=lambda question: False) == "removed"
    assert not busy.path.exists() and busy.branch not in _branches(repo)


def test_remove_refuses_unsaved_work_without_force(repo: Path) -> None:
    tree = create_worktree(repo, "keepme")
    (tree.path / "draft.txt").write_text("draft\n")
    with pytest.raises(CommandcodeError, match="nothing was removed"):
        remove_worktree(repo, "keepme")
    assert (tree.path / "draft.txt").read_text() == "draft\n"
    remove_worktree(repo, "keepme", force=True)
    assert not tree.path.exists() and "worktree-keepme" not in _branches(repo)
    with pytest.raises(CommandcodeError, match="no worktree named"):
        remove_worktree(repo, "keepme")


def test_settings_root_is_the_main_checkout(repo: Path) -> None:
    tree = create_worktree(repo, "perm")
    assert settings_root(tree.path) == repo
    assert settings_root(repo) == repo


def test_cli_worktree_flag_and_commands(repo: Path, home: Path) -> None:
    completed = run_cli(["-w", "cli-one", "-p", "hello", "--output-format", "json"], repo, home)
    assert completed.returncode == 0, completed.stderr
    tree = repo / ".commandcode" / "worktrees" / "cli-one"
    assert tree.is_dir() and "worktree" in completed.stderr
    transcript = only_transcript(home, tree)
    assert json.loads(transcript.read_text().splitlines()[0])["cwd"] == str(tree)
    generated = run_cli(["-p", "hello", "--worktree"], repo, home)
    assert generated.returncode == 0, generated.stderr
    listing = json.loads(run_cli(["worktrees", "list", "--json"], repo, home).stdout)
    assert {row["name"] for row in listing} >= {"cli-one"} and len(listing) == 2  # -p removed nothing
    (tree / "x.txt").write_text("x\n")
    refused = run_cli(["worktrees", "remove", "cli-one"], repo, home)
    assert_error_lines(refused, error_contains="nothing was removed")
    assert (tree / "x.txt").exists()
    assert run_cli(["worktrees", "remove", "cli-one", "--force"], repo, home).returncode == 0
    assert not tree.exists()


@pytest.mark.parametrize("args, code, fragment", [
    (["-w", "../up", "-p", "hi"], 2, "invalid worktree name"),
    (["-w", "a/b", "-p", "hi"], 2, "invalid worktree name"),
    (["worktrees", "remove", ".."], 2, "invalid worktree name"),
])
def test_cli_bad_names(repo: Path, home: Path, args: list[str], code: int, fragment: str) -> None:
    assert_error_lines(run_cli(args, repo, home), error_contains=fragment, exit_code=code)
    assert not (repo / ".commandcode").exists()


def test_cli_outside_a_repository(tmp_path: Path, home: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert_error_lines(run_cli(["-w", "-p", "hi"], plain, home), error_contains="not a git repository")
    assert_error_lines(run_cli(["worktrees", "list"], plain, home), error_contains="not a git repository")
    assert list(plain.iterdir()) == [] and not (home / "projects").exists()


def test_cli_in_a_repository_with_no_commits(tmp_path: Path, home: Path) -> None:
    empty = git_repo(tmp_path / "empty", commit=False)
    (empty / "draft.txt").write_text("not committed\n")
    line = assert_error_lines(run_cli(["-w", "x", "-p", "hi"], empty, home), error_contains="has no commits yet")
    assert "commit" in line
    assert sorted(path.name for path in empty.iterdir()) == [".git", "draft.txt"]
    assert not (home / "projects").exists()
