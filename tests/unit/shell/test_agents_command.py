"""`/agents`: listing (with each file and the warning of a broken one), showing one agent, and
`/agents new` writing a file the registry reads back, never over an existing one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from commandcode.agent.agents.authoring import NewAgent, new_agent_file
from commandcode.agent.agents.registry import load_agents
from commandcode.errors import CommandcodeError
from helpers.fake_shell import FakeShell, run_line


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_list_shows_every_source_with_its_file_and_the_warnings(shell: FakeShell, home: Path, workdir: Path) -> None:
    user = _write(home / "agents", "changelog.md", "---\ndescription: Writes changelogs\n---\nWrite it.\n")
    project = _write(workdir / ".commandcode" / "agents", "reviewer.md",
                     "---\nname: reviewer\ndescription: Reviews diffs\ntools: read_file, grep\n---\nReview.\n")
    broken = _write(workdir / ".commandcode" / "agents", "broken.md", "---\nname: [unclosed\n---\nx\n")
    run_line(shell, "/agents")
    text = "\n".join(shell.lines)
    assert shell.lines[0] == "Agents (2 custom)"
    assert text.index("User agents") < text.index("changelog") < text.index("Project agents") \
        < text.index("reviewer") < text.index("Default agents")
    assert str(user) in text and str(project) in text
    assert "Reviews diffs" in text and "general" in text and "explore" in text and "plan" in text
    assert any(line.startswith("warning: ") and str(broken) in line for line in shell.lines)


def test_list_without_custom_agents_says_so(shell: FakeShell) -> None:
    run_line(shell, "/agents")
    assert shell.lines[0] == "Agents (no custom agents)"
    assert "User agents" not in "\n".join(shell.lines)


def test_show_prints_the_fields_and_the_prompt(shell: FakeShell, workdir: Path) -> None:
    path = _write(workdir / ".commandcode" / "agents", "writer.md",
                  "---\nname: writer\ndescription: Writes reports\ntools: \"*\"\ndisallowedTools: shell_command\n"
                  "model: claude-opus-4-8\nmaxTurns: 40\npermissionMode: plan\nbackground: true\n---\n"
                  "You write reports.\nSecond line.\n")
    run_line(shell, "/agents writer")
    assert shell.lines[:10] == ["name: writer", "source: project", f"file: {path}", "description: Writes reports",
                                "tools: all tools", "disallowedTools: shell_command", "model: claude-opus-4-8",
                                "maxTurns: 40", "permissionMode: plan", "background: true"]
    assert shell.lines[-1] == "You write reports.\nSecond line."
    shell.lines.clear()
    run_line(shell, "/agents explore")
    assert "source: bundled" in shell.lines and "tools: glob, grep, read_file, read_directory" in shell.lines
    assert shell.lines[-1].startswith("You are a codebase explorer.")


def test_show_refuses_an_unknown_name(shell: FakeShell) -> None:
    with pytest.raises(CommandcodeError, match="no agent named 'nobody'") as caught:
        run_line(shell, "/agents nobody")
    assert caught.value.hint == "/agents lists them"


def test_new_writes_a_project_agent_the_registry_reads_back(shell: FakeShell, workdir: Path) -> None:
    (workdir / ".git").mkdir()
    shell.answers = ['Reviews diffs: "quoted" and # not a comment', 2, "You review.\nBe brief."]
    run_line(shell, "/agents new code-reviewer")
    path = workdir / ".commandcode" / "agents" / "code-reviewer.md"
    assert shell.lines == [f"Created agent code-reviewer: {path}"]
    agent = load_agents(workdir).get("code-reviewer")
    assert agent is not None and agent.source == "project" and agent.path == str(path)
    assert agent.description == 'Reviews diffs: "quoted" and # not a comment'
    assert agent.tools == ("read_file", "read_directory", "grep", "glob", "edit_file", "write_file")
    assert agent.system_prompt == "You review.\nBe brief."
    assert load_agents(workdir).warnings == []


def test_new_user_agent_goes_to_the_data_dir_and_wins(shell: FakeShell, home: Path, workdir: Path) -> None:
    _write(workdir / ".commandcode" / "agents", "helper.md", "---\ndescription: project one\n---\np\n")
    shell.answers = ["user one", 0, "Help."]
    run_line(shell, "/agents new helper --user")
    path = home / "agents" / "helper.md"
    assert shell.lines[0] == f"Created agent helper: {path}"
    assert "wins over" in shell.lines[1]
    agent = load_agents(workdir).get("helper")
    assert agent is not None and agent.source == "user" and agent.tools == "*" and agent.description == "user one"


def test_new_never_overwrites_and_refuses_bad_names(shell: FakeShell, workdir: Path) -> None:
    existing = _write(workdir / ".commandcode" / "agents", "mine.md", "---\ndescription: keep me\n---\nkeep\n")
    before = existing.read_bytes()
    shell.answers = ["other", 0, "other prompt"]
    with pytest.raises(CommandcodeError, match="exists: not overwritten"):
        run_line(shell, "/agents new mine")
    assert shell.answers == ["other", 0, "other prompt"]  # refused before any question
    with pytest.raises(CommandcodeError, match="exists: not overwritten"):  # one made while the questions ran
        new_agent_file(str(existing.parent), NewAgent("mine", "other", "*", "other prompt"))
    assert existing.read_bytes() == before
    for line, message in (("/agents new explore", "reserved"), ("/agents new 'bad name'", "usage"),
                          ("/agents new a.b", "not an agent name"), ("/agents new", "usage"),
                          ("/agents new x --user --project", "usage"), ("/agents a b", "usage")):
        with pytest.raises(CommandcodeError, match=message):
            run_line(shell, line)
    assert sorted(os.listdir(existing.parent)) == ["mine.md"]


def test_new_cancelled_writes_nothing(shell: FakeShell, workdir: Path) -> None:
    shell.answers = ["desc", None]
    run_line(shell, "/agents new later")
    assert shell.notices == ["cancelled: no agent written"]
    assert not (workdir / ".commandcode").exists()


def test_completion_offers_new_and_the_agent_names(shell: FakeShell) -> None:
    from commandcode.shell.slash import registry

    complete = registry()["agents"].complete
    assert complete is not None
    assert complete(shell, "") == ["new", "general", "explore", "plan"]
    assert complete(shell, "ex") == ["explore"]


def test_list_notes_a_file_another_of_the_same_name_hides(shell: FakeShell, home: Path, workdir: Path) -> None:
    user = _write(home / "agents", "helper.md", "---\ndescription: the user's\n---\nu\n")
    project = _write(workdir / ".commandcode" / "agents", "helper.md", "---\ndescription: the project's\n---\np\n")
    run_line(shell, "/agents")
    assert f"note: {project} is not used: {user} defines helper first" in shell.lines
    assert "the user's" in "\n".join(shell.lines) and "the project's" not in "\n".join(shell.lines)
