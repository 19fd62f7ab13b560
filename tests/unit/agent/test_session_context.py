"""The session's project context (`SessionHandle.project`, issue #27): the settings a session's
parts read come from the one context of the launch. The status bar's permission mode is read
from it, not from the files at each redraw: a settings file changed behind the session's back
shows only after an explicit refresh (a settings write, or a turn's start). A launch resolves a
`-r` reference once (`launcher.start.place` hands what it found to `AgentSession.start`), and
the main checkout has one rule (`config.settings_files.main_checkout`), which git agrees with."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.config.context import ProjectContext


@pytest.fixture
def project(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    (folder / ".commandcode").mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


def _mode(folder: Path, mode: str) -> None:
    (folder / ".commandcode" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": mode}}))


def test_the_status_bars_mode_is_read_from_the_context_not_the_files(project: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _mode(project, "plan")
    agent = AgentSession.start(project)
    assert agent.models.effective_permission_mode() == "plan"
    _mode(project, "acceptEdits")  # changed on disk behind the session's back
    opened: list[str] = []
    real_open = open

    def counting_open(file: object, *args: object, **kwargs: object) -> object:
        opened.append(os.fspath(file) if isinstance(file, (str, os.PathLike)) else repr(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", counting_open)
    for _ in range(50):  # fifty redraws
        assert agent.models.effective_permission_mode() == "plan"
    monkeypatch.undo()
    assert [path for path in opened if "settings" in path] == []
    agent.handle.project.refresh()  # what a settings write does
    assert agent.models.effective_permission_mode() == "acceptEdits"


def test_a_turn_rereads_the_settings_once_and_the_bar_follows(project: Path) -> None:
    _mode(project, "plan")
    with AgentSession.start(project) as agent:
        assert agent.models.effective_permission_mode() == "plan"
        _mode(project, "acceptEdits")
        assert agent.models.effective_permission_mode() == "plan"
        agent.turns.run_turn("hello")  # a turn's start rereads them (the turn runs with what the files say)
        assert agent.models.effective_permission_mode() == "acceptEdits"


def test_a_launch_context_is_handed_on_and_one_for_another_folder_is_not(project: Path, tmp_path: Path) -> None:
    context = ProjectContext(project)
    agent = AgentSession.start(project, project=context)
    assert agent.handle.project is context
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = AgentSession.start(elsewhere, project=context)  # not this folder's: its own
    assert other.handle.project is not context and other.handle.project.cwd == str(elsewhere)


def test_a_launch_resolves_a_resume_reference_once(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import commandcode.agent.runtime as runtime
    import commandcode.catalog.listing as listing
    from commandcode.launcher.flags import Launch
    from commandcode.launcher.start import place, start

    with AgentSession.start(project, entrypoint="print") as first:
        first.turns.run_turn("hello")
    calls: list[str] = []
    real = listing.resolve_session

    def counting(reference: str, cwd: str | os.PathLike[str]) -> object:
        calls.append(reference)
        return real(reference, cwd)

    monkeypatch.setattr(listing, "resolve_session", counting)
    monkeypatch.setattr(runtime, "resolve_session", counting)
    launch = Launch()
    launch.resume = first.session_id[:8]
    where = place(launch, move=True)  # the shell's launch: where the session runs, then the session
    agent = start(launch, where, entrypoint=None, notify=lambda text: None)
    try:
        assert agent.session_id == first.session_id and not agent.handle.is_new
        assert calls == [first.session_id[:8]]  # once: the agent opens what the launcher found
        assert agent.handle.project is where.project  # and the launch's one context
    finally:
        agent.close()


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def test_one_rule_for_the_main_checkout_that_git_agrees_with(home: Path, tmp_path: Path) -> None:
    from commandcode.workspace.worktrees import _main_root, create_worktree, settings_root

    repo = (tmp_path / "repo").resolve()
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "a.txt").write_text("a")
    _git("add", "a.txt", cwd=repo)
    _git("commit", "-q", "-m", "a", cwd=repo)
    linked = tmp_path / "linked"  # a worktree the user made, not one of ours
    _git("worktree", "add", "-q", str(linked), cwd=repo)
    ours = create_worktree(repo, "ours")
    for folder in (repo, linked, ours.path, ours.path / "sub"):
        folder.mkdir(exist_ok=True)
        assert ProjectContext(folder).main_checkout == str(repo) == str(_main_root(folder))
    # The settings follow the main checkout only from our session worktrees.
    assert ProjectContext(ours.path).settings_root == str(repo) == str(settings_root(ours.path))
    assert ProjectContext(linked).settings_root == str(linked) == str(settings_root(linked))
