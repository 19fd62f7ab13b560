"""The gate of `agent/bash_guard.py`: a `bash` command's user part runs only once its process
group is registered with the guard. A registration that fails (a guard that cannot start) still
opens it; one that is cut short (an exception in the agent) closes it, and the shell exits
without running anything (on a02df78 the command had already started when the registration ran)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from commandcode.agent import bash_guard
from commandcode.agent.bash_tool import run_bash
from helpers.cli import wait_for


def _ended(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def test_a_command_runs_when_no_guard_can_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bash_guard, "_guard", None)
    monkeypatch.setattr(bash_guard, "_start", lambda: None)
    assert run_bash({"command": "echo $0; cat; echo ran"}, tmp_path) == ("/bin/sh\nran", False)  # stdin: /dev/null


def test_a_registration_cut_short_runs_nothing_of_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shells: list[int] = []

    def interrupted(group: int) -> None:
        shells.append(group)
        raise KeyboardInterrupt

    monkeypatch.setattr(bash_guard, "guard_group", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_bash({"command": "touch ran"}, tmp_path)
    [shell] = shells
    wait_for(lambda: _ended(shell), what="the command's shell to end")
    assert not (tmp_path / "ran").exists()
    with pytest.raises(ChildProcessError):
        os.waitpid(shell, os.WNOHANG)  # reaped before the exception went on: no zombie left
