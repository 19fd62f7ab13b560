"""The passes around a `bash` call look only at what the folder watches saw change, and reuse
git's listing while no file was created, deleted or moved: every change must still be found.
Real git repositories, real `bash` processes, each turn's tree compared after rewinds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.checkpoints.modes import RewindMode
from commandcode.checkpoints.rewind import RewindOptions
from helpers.checkpoints import snapshot, write


@pytest.fixture
def project(project_here: Path) -> Path:
    return project_here


def _bash(command: str) -> str:
    return "call bash " + json.dumps({"command": command})


@pytest.mark.parametrize("repository", [True, False], ids=["git", "plain"])
def test_every_change_of_consecutive_bash_turns_is_undone(project: Path, repository: bool) -> None:
    write(project / "src/a.py", "a = 1\n")
    write(project / ".gitignore", "build/\n")
    (project / "docs/empty").mkdir(parents=True)  # untracked folders holding no file yet
    if repository:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        subprocess.run(["git", "-C", str(project), "add", "src", ".gitignore"], check=True)
    commands = [
        "echo x > docs/empty/new.md && echo 'b = 2' >> src/a.py",
        "echo 'c = 3' >> src/a.py",  # only a change: the listing is reused
        "chmod 600 src/a.py && touch -d '2001-01-01' docs/empty/new.md && echo z > docs/empty/new.md",
        "mkdir -p n/m && echo y > n/m/z.txt && mv src/a.py src/b.py",
        "rm -r docs && echo built > build/out.bin",
        "echo again > n/m/z.txt",
    ]
    trees = []
    with AgentSession.start(project, permission_mode="bypassPermissions") as agent:
        agent.turns.run_turn("hello")
        for command in commands:
            trees.append(snapshot(project))
            assert agent.turns.run_turn(_bash(command)).error is None
    trees.append(snapshot(project))
    rewinder = AgentSession.for_reference(agent.session_id)
    ignored = {"build/out.bin"}

    def tracked(tree: dict[str, object]) -> dict[str, object]:
        return {name: value for name, value in tree.items() if name not in ignored}

    for number in range(len(commands) + 1, 1, -1):  # turn N's checkpoint: the tree before its command
        rewinder.rewinds.rewind(number, RewindMode.CODE, RewindOptions(force=True))
        assert tracked(snapshot(project)) == tracked(trees[number - 2]), f"turn {number}"
    rewinder.rewinds.redo()  # undoes the last rewind (to turn 2): back to the tree before turn 3
    assert tracked(snapshot(project)) == tracked(trees[1])
