"""Nothing a `bash` call started outlives the agent (issue 26 §4, "children outlive a kill -9"):
a real `-p --yolo` agent on the offline model runs a command that backgrounds a grandchild which
writes a file once the test lets it (a `release` file, made after the kill: a grandchild that
writes after a fixed delay could write before a loaded machine got round to the kill); the agent
is SIGKILLed while the command runs, and the late file never appears, and no process of the
command's group is left. On 55fdfa8 the grandchild (and
the command's own `sleep`) went on running and wrote `late`, which no checkpoint tracked.

An agent killed between the command's fork and its group's registration with the guard (a window
the test hook `COMMANDCODE_TEST_GUARD_DELAY_MS` widens) leaves nothing either: the command's user
part waits for the registration. On a02df78 the command ran at once, unguarded, and outlived the
agent (CI hit that window once without the hook)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.cli import cli_env, kill_group, run_ok, start_cli, wait_for

# A grandchild's wait for the test's `release` file (made once the agent is gone).
WAIT_RELEASE = "until [ -e release ]; do sleep 0.05; done;"


def _bash(command: str) -> str:
    return "call bash " + json.dumps({"command": command})


def _group_gone(group: int) -> bool:
    """No live process of the group is left (a zombie nobody reaped yet counts as gone)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            return False
    return True


def _command_shell(agent: int) -> int | None:
    """The pid of the agent's `/bin/sh` child (its `bash` command), if it has one yet."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            parent = int(Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if parent == agent and argv[:2] == [b"/bin/sh", b"-c"]:
            return int(entry.name)
    return None


@pytest.mark.parametrize("how", ["sigkill", "sigterm"])
def test_an_agent_killed_before_the_group_is_guarded_runs_nothing_of_the_command(home: Path, workdir: Path,
                                                                                 how: str) -> None:
    command = "touch started; (sleep 60; touch late) & sleep 60"
    agent = subprocess.Popen([sys.executable, "-m", "commandcode", "-p", _bash(command), "--yolo"], cwd=workdir,
                             env=cli_env(home, COMMANDCODE_TEST_GUARD_DELAY_MS="60000"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    shell = None
    try:
        wait_for(lambda: _command_shell(agent.pid) is not None, what="the command's shell to be forked")
        shell = _command_shell(agent.pid)
        assert shell is not None
        os.kill(agent.pid, signal.SIGKILL if how == "sigkill" else signal.SIGTERM)
        agent.communicate(timeout=30)
        wait_for(lambda: _group_gone(shell), timeout=15, what="the unguarded command's group to end")
        assert not (workdir / "started").exists(), "the command ran before its group was guarded"
    finally:
        if agent.poll() is None:
            kill_group(agent)
        if shell is not None:
            try:
                os.killpg(shell, signal.SIGKILL)
            except OSError:
                pass


@pytest.mark.parametrize("how", ["sigkill", "sigterm"])
def test_a_killed_agent_takes_every_process_its_command_started(home: Path, workdir: Path, how: str) -> None:
    command = f"echo $$ > group; ({WAIT_RELEASE} touch late) & ({WAIT_RELEASE} sleep 1; touch later) & sleep 60"
    agent = start_cli(["-p", _bash(command), "--yolo"], workdir, home)
    try:
        wait_for(lambda: (workdir / "group").is_file() and (workdir / "group").read_text().strip().isdigit(),
                 what="the command to start")
        group = int((workdir / "group").read_text())
        os.kill(agent.pid, signal.SIGKILL if how == "sigkill" else signal.SIGTERM)
        agent.communicate(timeout=30)
        wait_for(lambda: _group_gone(group), timeout=15, what="the command's process group to die")
        (workdir / "release").touch()
        time.sleep(2.0)  # past the moment the grandchildren would have written, had they lived
        assert not (workdir / "late").exists() and not (workdir / "later").exists()
    finally:
        if agent.poll() is None:
            kill_group(agent)
        try:
            os.killpg(int((workdir / "group").read_text()), signal.SIGKILL)
        except (OSError, ValueError):
            pass


def test_a_finished_command_keeps_its_background_children_while_the_agent_runs(home: Path, workdir: Path) -> None:
    """Today's behaviour for commands that finish: the turn ends, the background child goes on;
    it ends with the agent (here the `-p` process exiting normally), never writing afterwards."""
    prompt = "\n".join([  # each background child waits for its go, not for a time a loaded machine may overrun
        _bash("(until [ -e go ]; do sleep 0.05; done; touch early) > /dev/null 2>&1 &"),
        _bash("touch go; until [ -e early ]; do sleep 0.05; done; ls early"),
        _bash(f"echo $$ > group; ({WAIT_RELEASE} touch late) > /dev/null 2>&1 &"),
    ])
    completed = run_ok(["-p", prompt, "--yolo"], workdir, home)
    assert (workdir / "early").exists(), completed.stdout
    group = int((workdir / "group").read_text())
    wait_for(lambda: _group_gone(group), timeout=15, what="the background group to end with the agent")
    (workdir / "release").touch()
    time.sleep(2.0)  # a child that outlived the agent would write by now
    assert not (workdir / "late").exists()
