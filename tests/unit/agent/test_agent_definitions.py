"""Agent definitions (issue #28): the bundled three, custom agent files from the user's and the
project's folders with every front-matter field the real CLI 1.64.0 reads, its precedence, one
warning line per bad file while the others load, and the tool grants a run gets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from commandcode.agent.agent_tool_specs import AGENT_OUTPUT_SPEC, agent_tool_spec
from commandcode.agent.agents.definitions import BUNDLED, AgentDefinition
from commandcode.agent.agents.frontmatter import FrontMatterError, parse_front_matter
from commandcode.agent.agents.registry import load_agents, project_agent_dirs
from commandcode.agent.agents.results import Outcome, launched_text, outcome_text
from commandcode.agent.agents.tool_access import resolve_tools, tool_error
from commandcode.agent.tool_specs import TOOL_NAMES

# The full example of the real CLI's custom-agents.md, byte for byte.
REPORT_WRITER = """---
name: report-writer
description: "Writes a structured research report from the current repo. Delegate long-form summarization and analysis tasks here."
tools: "*"                                  # grant everything…
disallowedTools: shell_command, write_file  # …except shells and file writes
model: claude-opus-4-8                       # any /model id, or omit to inherit
reasoningEffort: high                        # a level THIS model supports (varies by model); omit for default
maxTurns: 40                                 # cap the loop (default 100)
permissionMode: plan                         # default|accept-edits|yolo|plan|dont-ask
background: true                             # detach; collect via agent_output
showOutput: true                             # render the final report in the feed
---

You are a research report writer. You receive one self-contained task and
produce a complete, well-structured Markdown report as your final message.
"""


@pytest.fixture
def dirs(home: Path, workdir: Path) -> tuple[Path, Path]:
    """(the user's agent folder under the test's data dir, the project's), both made."""
    user, project = home / "agents", workdir / ".commandcode" / "agents"
    user.mkdir(parents=True)
    project.mkdir(parents=True)
    return user, project


def test_the_bundled_agents_are_the_real_clis() -> None:
    agents = {agent.name: agent for agent in BUNDLED}
    assert list(agents) == ["general", "explore", "plan"]
    assert agents["general"].tools == "*" and agents["plan"].tools == ("read_file",)
    assert agents["explore"].tools == ("glob", "grep", "read_file", "read_directory")
    assert agents["general"].system_prompt.startswith("You are a general-purpose autonomous agent.")
    assert "Depth: [level]" in agents["explore"].system_prompt and "**Recommended Approach**" in agents["plan"].system_prompt
    assert all(agent.turn_limit == 100 and agent.pinned_model is None for agent in BUNDLED)


def test_every_front_matter_field_of_the_docs_example(dirs: tuple[Path, Path], workdir: Path) -> None:
    (dirs[1] / "report-writer.md").write_text(REPORT_WRITER)
    registry = load_agents(workdir)
    agent = registry.get("report-writer")
    assert registry.warnings == [] and agent is not None
    assert agent.description.startswith("Writes a structured research report") and agent.tools == "*"
    assert agent.disallowed_tools == ("shell_command", "write_file")
    assert (agent.model, agent.reasoning_effort, agent.max_turns, agent.permission_mode) == (
        "claude-opus-4-8", "high", 40, "plan")
    assert agent.background and agent.show_output and agent.source == "project"
    assert agent.system_prompt.startswith("You are a research report writer.") and agent.system_prompt.endswith("message.")
    assert agent.path == str(dirs[1] / "report-writer.md")
    # deny beats allow: every tool of ours but the shell and write_file
    assert resolve_tools(agent, TOOL_NAMES).granted == ("read_file", "edit_file")


@pytest.mark.parametrize(("tools", "granted"), [
    ("read_file, edit_file", ("read_file", "edit_file")),
    ("read_file edit_file", ("read_file", "edit_file")),
    ("[read_file, 'edit_file']", ("read_file", "edit_file")),
    ("\n  - read_file\n  - edit_file", ("read_file", "edit_file")),
    ("*", tuple(TOOL_NAMES)),
    ("shell_command, read_file, read_file", ("bash", "read_file")),
    ("Read File, Edit File", ("read_file", "edit_file")),  # display names, as the /agents wizard shows them
])
def test_the_tools_line_in_every_spelling(dirs: tuple[Path, Path], workdir: Path, tools: str,
                                          granted: tuple[str, ...]) -> None:
    (dirs[1] / "t.md").write_text(f"---\nname: t\ntools: {tools}\n---\nbody\n")
    agent = load_agents(workdir).get("t")
    assert agent is not None and resolve_tools(agent, TOOL_NAMES).granted == granted


def test_no_tools_line_grants_nothing_and_spawn_tools_are_never_granted(dirs: tuple[Path, Path], workdir: Path) -> None:
    (dirs[1] / "bare.md").write_text("---\nname: bare\n---\nbody\n")
    (dirs[1] / "spawner.md").write_text("---\nname: spawner\ntools: agent, agent_output, read_file\n---\n")
    registry = load_agents(workdir)
    bare, spawner = registry.get("bare"), registry.get("spawner")
    assert bare is not None and spawner is not None
    assert resolve_tools(bare, TOOL_NAMES).granted == ()
    grant = resolve_tools(spawner, [*TOOL_NAMES, "agent", "agent_output"])
    assert grant.granted == ("read_file",) and tool_error(spawner, grant) is None


def test_a_tool_that_exists_nowhere_is_a_tool_error_naming_the_file(dirs: tuple[Path, Path], workdir: Path) -> None:
    (dirs[1] / "typo.md").write_text("---\nname: typo\ntools: read_file, reed_file, grep\n---\n")
    agent = load_agents(workdir).get("typo")
    assert agent is not None
    grant = resolve_tools(agent, TOOL_NAMES)
    assert grant.granted == ("read_file",) and grant.unavailable == ("grep",) and grant.unknown == ("reed_file",)
    message = tool_error(agent, grant)
    assert message is not None and "reed_file" in message and str(dirs[1] / "typo.md") in message
    assert "\n" not in message
    explore = next(agent for agent in BUNDLED if agent.name == "explore")
    assert tool_error(explore, resolve_tools(explore, TOOL_NAMES)) is None  # the real CLI's tools we lack: dropped


def test_first_definition_wins_bundled_then_user_then_project(dirs: tuple[Path, Path], workdir: Path) -> None:
    user, project = dirs
    (user / "shared.md").write_text("---\nname: shared\ndescription: from the user\n---\n")
    (project / "shared.md").write_text("---\nname: shared\ndescription: from the project\n---\n")
    (project / "general.md").write_text("---\nname: General\ndescription: mine\n---\n")  # reserved, any case
    (project / "Odd Name!.md").write_text("no front matter at all: the body is the prompt\n")
    registry = load_agents(workdir)
    shared = registry.get("shared")
    assert shared is not None and (shared.description, shared.source) == ("from the user", "user")
    general = registry.get("general")
    assert general is not None and general.source == "bundled"
    odd = registry.get("Odd_Name_")
    assert odd is not None and odd.system_prompt == "no front matter at all: the body is the prompt" and odd.tools == ()
    assert registry.names()[:3] == ["general", "explore", "plan"] and registry.warnings == []


def test_the_nearer_project_folder_wins_over_the_repository_roots(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    deep = root / "pkg" / "sub"
    (deep / ".commandcode" / "agents").mkdir(parents=True)
    (root / ".commandcode" / "agents").mkdir(parents=True)
    (deep / ".commandcode" / "agents" / "a.md").write_text("---\nname: a\ndescription: near\n---\n")
    (root / ".commandcode" / "agents" / "a.md").write_text("---\nname: a\ndescription: root\n---\n")
    (root / ".commandcode" / "agents" / "b.md").write_text("---\nname: b\ndescription: root only\n---\n")
    assert project_agent_dirs(str(deep)) == [str(deep / ".commandcode" / "agents"), str(root / ".commandcode" / "agents")]
    registry = load_agents(deep)
    a, b = registry.get("a"), registry.get("b")
    assert a is not None and a.description == "near" and b is not None and b.description == "root only"


BAD_FILES = {
    "duplicate.md": "---\nname: dup\nname: again\n---\n",
    "tab.md": "---\nname: tab\ntools:\n\t- read_file\n---\n",
    "unterminated.md": '---\nname: "open\n---\n',
    "colon.md": "---\nname: colon\ndescription: use it: when asked\n---\n",
    "alias.md": "---\nname: alias\nmodel: *other\n---\n",
    "nokey.md": "---\nname: nokey\njust some words\n---\n",
}


def test_a_malformed_file_is_one_warning_line_and_the_others_load(dirs: tuple[Path, Path], workdir: Path) -> None:
    project = dirs[1]
    for name, text in BAD_FILES.items():
        (project / name).write_text(text)
    (project / "latin1.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\n")
    (project / "folder.md").mkdir()
    (project / "huge.md").write_text("---\nname: huge\n---\n" + "x" * (1 << 20))  # all of it would go to the model
    os.mkfifo(project / "fifo.md")  # never waited on
    (project / "good.md").write_text("---\nname: good\ntools: read_file\n---\nGood agent.\n")
    registry = load_agents(workdir)
    assert registry.get("good") is not None and registry.names() == ["general", "explore", "plan", "good"]
    bad = sorted([*BAD_FILES, "latin1.md", "folder.md", "fifo.md", "huge.md"])
    assert len(registry.warnings) == len(bad), registry.warnings
    for warning, name in zip(sorted(registry.warnings), sorted(str(project / name) for name in bad)):
        assert warning.startswith(f"agent file {name} ignored: ") and "\n" not in warning


def test_invalid_optional_fields_warn_as_the_real_cli_and_the_file_loads(dirs: tuple[Path, Path], workdir: Path) -> None:
    path = dirs[1] / "loose.md"
    path.write_text("---\nname: loose\nmaxTurns: lots\npermissionMode: sideways\nreasoningEffort: meduim\n"
                    "model: inherit\nbackground: nope\n---\nPrompt.\n")
    registry = load_agents(workdir)
    agent = registry.get("loose")
    assert agent is not None and agent.max_turns is None and agent.turn_limit == 100
    assert agent.permission_mode is None and agent.reasoning_effort is None and agent.pinned_model is None
    assert not agent.background
    assert registry.warnings == [f'Ignoring invalid reasoningEffort "meduim" in {path}',
                                 f'Ignoring invalid maxTurns "lots" in {path}',
                                 f'Ignoring invalid permissionMode "sideways" in {path}']


@pytest.mark.parametrize(("given", "mode"), [("accept-edits", "auto-accept"), ("yolo", "bypass"), ("dont-ask", "dont-ask"),
                                             ("bypassPermissions", "bypass"), ("acceptEdits", "auto-accept")])
def test_permission_mode_aliases(dirs: tuple[Path, Path], workdir: Path, given: str, mode: str) -> None:
    (dirs[1] / "m.md").write_text(f"---\nname: m\npermissionMode: {given}\n---\n")
    agent = load_agents(workdir).get("m")
    assert agent is not None and agent.permission_mode == mode
    assert agent.run_permission_mode("default") == mode and agent.run_permission_mode("plan") == "plan"


def test_front_matter_yaml_forms() -> None:
    fields, body = parse_front_matter("\ufeff---\r\nname: x\r\ndescription: >\r\n  folded\r\n  text\r\n"
                                      "tools: |\r\n  read_file\r\nmodel: 'it''s'\r\nnested:\r\n  a: 1\r\n"
                                      "empty:\r\n---\r\nBody\r\n")
    assert fields == {"name": "x", "description": "folded text\n", "tools": "read_file\n", "model": "it's", "empty": ""}
    assert body == "Body"
    assert parse_front_matter("---\ntools: *\n---\n")[0] == {"tools": "*"}  # the real CLI quotes a bare `*`
    assert parse_front_matter('---\nd: "a\\tb \\u00e9"  # c\n---\n')[0] == {"d": "a\tb é"}
    assert parse_front_matter("no front matter\n") == ({}, "no front matter")
    with pytest.raises(FrontMatterError, match="invalid YAML: duplicated mapping key 'a'"):
        parse_front_matter("---\na: 1\na: 2\n---\n")


def test_the_wire_specs_list_the_registered_agents(dirs: tuple[Path, Path], workdir: Path) -> None:
    (dirs[1] / "reviewer.md").write_text("---\nname: reviewer\ndescription: Reviews diffs.\nmodel: stub-2\n---\n")
    agents = list(load_agents(workdir).agents.values())
    spec = agent_tool_spec(agents)
    schema = spec["input_schema"]
    assert spec["name"] == "agent" and schema["required"] == ["description", "prompt"]
    assert schema["properties"]["subagent_type"]["enum"] == ["general", "explore", "plan", "reviewer"]
    assert set(schema["properties"]) == {"description", "subagent_type", "prompt", "model", "run_in_background"}
    assert spec["description"].endswith("- reviewer: Reviews diffs. (model: stub-2)")
    assert "Available agents (subagent_type):\n- general: General-purpose agent" in spec["description"]
    only_custom = agent_tool_spec([AgentDefinition("x", "", "p", (), "project")], background=False)
    assert only_custom["input_schema"]["required"] == ["description", "subagent_type", "prompt"]
    assert "run_in_background" not in only_custom["input_schema"]["properties"]
    assert AGENT_OUTPUT_SPEC["input_schema"]["properties"]["action"]["enum"] == ["wait", "status", "kill"]


def test_result_texts_are_the_real_clis() -> None:
    # captured from the real CLI 1.64.0 against the stub (docs/format.md §21)
    outcome = Outcome("done with the tools", "end_turn", (2468, 112, 200, 0), 1, 2, 101)
    assert outcome_text(outcome) == ("done with the tools\n\n<usage>total_tokens: 2780\ntool_uses: 1\nturns: 2\n"
                                     "duration_ms: 101</usage>")
    assert outcome_text(Outcome(" ", "max_turns", (0, 0, 0, 0), 0, 100, 5)).startswith(
        "[sub-agent stopped early: hit its turn limit before finishing — output may be incomplete]\n\n"
        "(Sub-agent completed but returned no output.)")
    assert launched_text("bg-1-d2b0d571") == (
        "Background agent launched.\nagent_id: bg-1-d2b0d571\nThe agent is working in the background — do not "
        "duplicate its work. Use the agent_output tool with this agent_id to wait for or check its result.")
