"""Sessions the real Claude Code CLI wrote (`npm` marker): `ClaudeRun` runs the `claude` binary
offline against the stub Anthropic Messages API (helpers/stub_models.py) in a network namespace
of its own, and the session-scoped `claude_home` fixture generates one HOME with plain turns,
parallel tool calls, file edits with file-history backups, `--continue`, `--resume`,
`--fork-session`, `/compact`, a subagent, and a project whose path makes a long slug."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commandcode.interop.locations import claude_slug
from helpers.npm_programs import Programs, run_offline


def write(path: str, content: str) -> str:
    return f"[[tool Write {json.dumps({'file_path': path, 'content': content})}]]"


def edit(path: str, old: str, new: str) -> str:
    return f"[[tool Edit {json.dumps({'file_path': path, 'old_string': old, 'new_string': new})}]]"


class ClaudeRun:
    def __init__(self, programs: Programs, home: Path, log: Path) -> None:
        self.programs = programs
        self.home = home
        self.log = log

    def __call__(self, cwd: Path, *args: str) -> str:
        env = {"HOME": str(self.home), "ANTHROPIC_BASE_URL": "{STUB}", "ANTHROPIC_API_KEY": "sk-ant-stub",
               "IS_SANDBOX": "1", "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "1",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
               "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1"}
        run = run_offline([str(self.programs.claude), "--dangerously-skip-permissions", *args], cwd=cwd, env=env,
                          log=self.log, timeout=180).check()
        assert run.requests and all(request["path"].startswith("/v1/messages") for request in run.requests)
        return run.completed.stdout


@pytest.fixture(scope="session")
def claude_home(npm_programs: Programs, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One HOME of sessions the real `claude` wrote, made once per test run (about ten program
    starts) and shared by every test that reads them; a test that changes files copies them first."""
    root = tmp_path_factory.mktemp("claude")
    home, proj = root / "home", root / "proj"
    home.mkdir()
    proj.mkdir()
    (proj / "c.txt").write_text("base\n")
    claude = ClaudeRun(npm_programs, home, root / "requests.jsonl")
    claude(proj, "-p", "hello there")
    claude(proj, "-c", "-p", f"two files at once {write(str(proj / 'a.txt'), 'A')} {write(str(proj / 'b.txt'), 'B')}")
    claude(proj, "-c", "-p", f"edit it {edit(str(proj / 'c.txt'), 'base', 'changed')}")
    first = sorted((home / ".claude" / "projects" / claude_slug(str(proj))).glob("*.jsonl"))
    assert len(first) == 1
    first_id = first[0].stem
    claude(proj, "-r", first_id, "-p", f"again {edit(str(proj / 'c.txt'), 'changed', 'third')}")
    claude(proj, "-r", first_id, "--fork-session", "-p", "a forked turn")
    forks = [path for path in (home / ".claude" / "projects" / claude_slug(str(proj))).glob("*.jsonl")
             if path.stem != first_id]
    assert len(forks) == 1
    claude(proj, "-r", forks[0].stem, "-p", "/compact")
    claude(proj, "-r", forks[0].stem, "-p", "after the compaction")
    claude(proj, "-r", forks[0].stem, "-p", 'spawn [[tool Agent {"description": "helper", "prompt": "say hi", '
                                            '"subagent_type": "general-purpose"}]]')
    deep = root / ("very-long-folder-name-" * 10) / "project"
    deep.mkdir(parents=True)
    claude(deep, "-p", "hello from a long path")
    return {"home": home, "proj": proj, "first": first[0], "fork": forks[0], "deep": deep}
