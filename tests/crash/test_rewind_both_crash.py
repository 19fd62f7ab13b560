"""Crash tests of the two-part rewind (`--mode both`) and of redo: code and conversation land
together or not at all. A real process is SIGKILLed (at the worst moment, between the file
restore and the leaf move, and at random moments); the next command finishes what was begun, and
a redo then still returns the exact state from before the rewind."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.sessions.reader import open_session
from helpers.checkpoints import snapshot
from helpers.cli import cli_env, run_ok

FILES = 40

KILL_BEFORE_LEAF = textwrap.dedent(
    """
    import os, signal, sys
    from commandcode.agent.runtime import AgentSession
    from commandcode.checkpoints import rewind as rewinding
    from commandcode.checkpoints.modes import RewindMode

    def killed(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    rewinding.apply_conversation = killed  # kill -9 after the files and records landed, before the leaf moves
    AgentSession.for_reference(sys.argv[1]).rewinds.rewind(2, RewindMode.BOTH)
    """
)


def _write(path: str, content: str) -> str:
    return "call write_file " + json.dumps({"file_path": path, "content": content})


def _session(project: Path) -> tuple[str, list[dict[str, object]], list[list[object]]]:
    """Two turns over FILES files (the second also creates some); the trees and contexts before turn 2 and after it."""
    trees, contexts = [], []
    with AgentSession.start(project) as agent:
        agent.turns.run_turn("\n".join(_write(f"pkg/f{index}.txt", f"one {index}\n" * 50) for index in range(FILES)))
        trees.append(snapshot(project))
        contexts.append(list(agent.handle.messages))
        agent.turns.run_turn("\n".join(_write(f"pkg/f{index}.txt", f"two {index}\n" * 80) for index in range(FILES))
                       + "\n" + _write("made/new.txt", "new"))
        trees.append(snapshot(project))
        contexts.append(list(agent.handle.messages))
        return agent.session_id, trees, contexts


def _context(session: str) -> list[object]:
    return list(open_session(AgentSession.for_reference(session).files.transcript).context().messages)


def _run(script: str, *args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, env=cli_env(home), capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def project(project_here: Path) -> Path:
    return project_here


def test_a_kill_between_the_files_and_the_leaf_is_finished_by_the_next_command(home: Path, project: Path) -> None:
    session, trees, contexts = _session(project)
    killed = _run(KILL_BEFORE_LEAF, session, home=home, cwd=project)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert snapshot(project) == trees[0], "the files landed"
    assert _context(session) == contexts[1], "the leaf had not moved yet"
    listed = run_ok(["checkpoints", "list", session, "--json"], project, home)  # any command that opens it
    assert _context(session) == contexts[0], "the next command finished the move"
    assert [row["number"] for row in json.loads(listed.stdout)["checkpoints"]] == [1]
    run_ok(["rewind", session, "--redo", "--yes"], project, home)
    assert snapshot(project) == trees[1] and _context(session) == contexts[1]


@pytest.mark.slow
def test_kill_9_at_random_moments_leaves_code_and_conversation_together(home: Path, project: Path) -> None:
    session, trees, contexts = _session(project)
    rng = random.Random(20261201)
    outcomes = {"before": 0, "after": 0}
    for attempt in range(10):
        rewound = snapshot(project) == trees[0]
        args = ["rewind", session, "--redo", "--yes"] if rewound else ["rewind", session, "--to", "2", "--mode", "both", "--yes"]
        process = subprocess.Popen([sys.executable, "-m", "commandcode", *args], cwd=project,
                                   env=cli_env(home, COMMANDCODE_TEST_STEP_DELAY_MS="3"),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, 1.5))
        process.send_signal(signal.SIGKILL)
        process.wait()
        run_ok(["checkpoints", "list", session, "--json"], project, home)  # recovery: journal, then the leaf
        tree, context = snapshot(project), _context(session)
        if tree == trees[0]:
            assert context == contexts[0], f"attempt {attempt}: files rewound, conversation not"
            outcomes["after" if not rewound else "before"] += 1
        else:
            assert tree == trees[1], f"attempt {attempt}: the tree is half restored"
            assert context == contexts[1], f"attempt {attempt}: conversation rewound, files not"
            outcomes["before" if not rewound else "after"] += 1
        stray = [name for name in tree if any(part.startswith(".") for part in Path(name).parts)]
        assert not stray, stray
    assert sum(outcomes.values()) == 10
    if snapshot(project) == trees[0]:
        run_ok(["rewind", session, "--redo", "--yes"], project, home)
    assert snapshot(project) == trees[1] and _context(session) == contexts[1], "a redo after crashes is exact"
    assert os.listdir(home / "journals") in ([], [f"{session}.json.lock"])
