"""`commandcode rewind REF` without `--to`, in a real terminal (tmux): the menu opens, a
checkpoint and "Restore code only" are chosen with the keys, the confirmation is answered, and
the files are back. The screen is read with `tmux capture-pane`, waiting for it between keys."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from helpers.cli import cli_env, only_transcript, run_ok, wait_for
from helpers.terminal import tmux

pytestmark = [pytest.mark.terminal, pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")]


def test_the_menu_rewinds_code_in_a_real_terminal(home: Path, workdir: Path, tmp_path: Path) -> None:
    run_ok(["-p", "call write_file " + json.dumps({"file_path": "a.txt", "content": "one"})], workdir, home)
    session = only_transcript(home, workdir).name[: -len(".jsonl")]
    run_ok(["-p", "call write_file " + json.dumps({"file_path": "a.txt", "content": "two"}), "-r", session], workdir, home)
    name = f"cc-rewind-{uuid.uuid4().hex[:8]}"
    env = " ".join(f"{key}={shlex.quote(value)}" for key, value in cli_env(home, TERM="xterm-256color").items()
                   if key.startswith(("COMMANDCODE_", "PYTHON", "NO_COLOR", "PATH", "HOME", "TERM", "VIRTUAL_ENV")))
    command = f"env {env} {shlex.quote(sys.executable)} -m commandcode rewind {session}; echo EXITED $?; sleep 30"
    # A tmux server of the test's own (the machine's default one may be another run's, started
    # with another environment, COLUMNS and LINES among it: helpers/terminal.py).
    socket = tmp_path / "tmux.sock"

    def _tmux(*args: str) -> str:
        return tmux(socket, *args)

    _tmux("new-session", "-d", "-s", name, "-x", "160", "-y", "40", "-c", str(workdir), command)

    def screen() -> str:
        return _tmux("capture-pane", "-p", "-t", name)

    try:
        wait_for(lambda: "Enter: choose what" in screen(), what="the rewind menu, ready for keys")
        _tmux("send-keys", "-t", name, "Enter")  # the newest row: checkpoint 2
        wait_for(lambda: "Cancel" in screen(), what="the actions")
        for _ in range(2):
            _tmux("send-keys", "-t", name, "Down")
        wait_for(lambda: "restored: a.txt" in screen(), what="the preview of a code restore")
        _tmux("send-keys", "-t", name, "Enter")
        wait_for(lambda: "No, go back" in (shown := screen()) and "Yes, restore" in shown,
                 what="the confirmation, both answers")
        _tmux("send-keys", "-t", name, "Enter")  # the preselected answer is the action
        wait_for(lambda: "EXITED 0" in screen(), what="the command to finish")
        assert "Rewound to checkpoint 2 (restore code only)" in screen()
        assert (workdir / "a.txt").read_text() == "one"
    except AssertionError as error:
        raise AssertionError(f"{error}; the screen:\n{screen()}") from None
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True, timeout=30)
