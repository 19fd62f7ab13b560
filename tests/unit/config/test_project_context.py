"""The project context (`config/context.py`): the paths of a working directory resolved once,
the settings read once and reread only by `refresh()`, and the one rule for a malformed
settings file (the same one-line `SettingsError` every time it is asked, no defaults)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commandcode.config.context import ProjectContext
from commandcode.config.paths import sessions_folder
from commandcode.errors import SettingsError


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    """A repository (a `.git` folder is what the settings' root looks for) with a subfolder."""
    folder = (tmp_path / "repo").resolve()
    (folder / ".git" / "worktrees" / "feature").mkdir(parents=True)
    (folder / "src").mkdir()
    return folder


def test_the_paths_of_a_folder_in_a_repository(repo: Path) -> None:
    context = ProjectContext(repo / "src")
    assert (context.cwd, context.repository_root, context.main_checkout) == (str(repo / "src"), str(repo), str(repo))
    assert context.sessions_folder == sessions_folder(repo / "src")
    assert Path(context.sessions_folder).parent.name == "projects"  # under the data dir, not the repository


def test_a_session_worktrees_main_checkout_is_the_repository(repo: Path) -> None:
    tree = repo / ".commandcode" / "worktrees" / "feature"
    tree.mkdir(parents=True)
    (tree / ".git").write_text(f"gitdir: {repo / '.git' / 'worktrees' / 'feature'}\n")
    context = ProjectContext(tree)
    assert (context.repository_root, context.main_checkout) == (str(tree), str(repo))


def test_settings_are_read_once_until_refreshed(repo: Path) -> None:
    settings_file = repo / ".commandcode" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps({"branchSummary": True}))
    context = ProjectContext(repo)
    assert context.settings().branch_summary is True
    settings_file.write_text(json.dumps({"branchSummary": False}))
    assert context.settings().branch_summary is True  # no reread behind the caller's back
    assert context.refresh().settings().branch_summary is False


def test_a_malformed_settings_file_is_the_same_one_line_every_time(repo: Path) -> None:
    settings_file = repo / ".commandcode" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text('{"statusLine": ')
    context = ProjectContext(repo)
    for _ in range(2):  # never a default on the second ask
        with pytest.raises(SettingsError) as raised:
            context.settings()
        assert "settings.json:1:" in str(raised.value) and "\n" not in str(raised.value)
    assert context.warnings == []
    settings_file.write_text("{}")
    with pytest.raises(SettingsError):
        context.settings()  # still the file as it was read, until refreshed
    assert context.refresh().settings().data == {}
    assert settings_file.read_text() == "{}"


def test_settings_are_read_only_through_the_project_context() -> None:
    """Issue 27: one place reads the settings files. Callers with no context of their own (a
    library's `Policy`, the share service lookup, the backup rule) make one for their folder."""
    import ast

    import commandcode

    package = Path(commandcode.__file__).parent
    callers = []
    for source in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if isinstance(node, ast.Call):
                called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if called == "load_settings":
                    callers.append(f"{source.relative_to(package)}:{node.lineno}")
    assert [caller.split(":")[0] for caller in callers] == ["config/context.py"], callers


def test_the_share_service_is_the_callers_projects_or_the_current_directorys(repo: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.sharing.remote import configured

    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    for folder, port in ((repo, 7001), (other, 7002)):
        (folder / ".commandcode").mkdir(exist_ok=True)
        (folder / ".commandcode" / "settings.json").write_text(
            json.dumps({"share": {"server": f"http://127.0.0.1:{port}", "token": "$SHARE_TOKEN"}}))
    monkeypatch.setenv("SHARE_TOKEN", "t")
    monkeypatch.chdir(repo / "src")
    here = configured()  # a library caller with no context: the current directory's settings
    assert here is not None and here.server == "http://127.0.0.1:7001"
    there = configured(ProjectContext(other))
    assert there is not None and there.server == "http://127.0.0.1:7002"
    (other / ".commandcode" / "settings.json").write_text('{"share": ')
    with pytest.raises(SettingsError, match="settings.json:1:"):
        configured(ProjectContext(other))
