"""Sub-agent runs through the real shell in a pseudo-terminal (issue #28), with the offline
model: a foreground run's result comes back in the turn and `/tree` shows the run folded into
the call's row; Esc while the parent waits for a run
stops the wait, not the run (a later turn collects its result); a background run still going
at `/exit` is stopped and the shell says so in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from commandcode.sessions.files import SessionFiles
from helpers.cli import only_transcript, wait_for
from helpers.subagent_prompts import agent_call, call, run_metas
from helpers.terminal import ESC, shell_session

pytestmark = pytest.mark.terminal


def test_foreground_esc_and_background_runs_in_the_shell(home: Path, workdir: Path) -> None:
    shell = shell_session(workdir, home, ["--yolo"], columns=220)
    try:
        shell.line(agent_call(call("write_file", file_path="fg.txt", content="foreground\n"), description="Write fg"))
        shell.wait_screen("Ran 1 tool call(s)")
        shell.wait_prompt()
        assert (workdir / "fg.txt").read_text() == "foreground\n"
        shell.line("/tree")  # the call's row folds the run in
        shell.wait_screen("filter: default")
        shell.wait_screen("⤷ sub-agent general: Write fg · completed · 4 messages")
        shell.send("q")
        shell.wait_screen(" checkpoint(s)")  # back under the prompt (pyte may print a stray byte of
        shell.wait_screen(">")                # Textual's mode resets before the `>`)

        started, release = workdir / "started", workdir / "release"
        waits = call("bash", command=f"touch {started}; while [ ! -e {release} ]; do sleep 0.05; done; echo released")
        shell.line(agent_call(waits, description="Waits"))
        screen = shell.interrupt_once(started)
        assert "Traceback" not in screen
        shell.wait_prompt()
        release.touch()
        files = SessionFiles.for_transcript(only_transcript(home, workdir))
        detached = [agent_id for agent_id, meta in run_metas_any(files).items() if meta["description"] == "Waits"]
        assert len(detached) == 1
        shell.line(call("agent_output", agent_id=detached[0]))
        shell.wait_screen("Ran 1 tool call(s)")
        shell.wait_prompt()
        assert run_metas(files)[detached[0]]["status"] == "completed"

        shell.line(agent_call(call("bash", command="sleep 60"), description="Forever", run_in_background=True))
        shell.wait_screen("Background agent launched")
        shell.wait_prompt()
        shell.line("/exit")
        screen = shell.wait_screen("running sub-agent")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
    match = re.search(r"stopped 1 running sub-agent \((bg-3-[0-9a-f]{8})\)", shell.text())
    assert match, screen
    assert run_metas(files)[match.group(1)]["status"] == "killed"


def run_metas_any(files: SessionFiles) -> dict[str, dict[str, object]]:
    """The metas of every run started (a run's transcript appears with its first step)."""
    folder = Path(files.folder, files.session_id, "subagents")
    return {path.name.removeprefix("agent-").removesuffix(".meta.json"): json.loads(path.read_text())
            for path in folder.glob("*.meta.json")}


def test_a_foreground_run_asks_through_the_shell_and_the_answer_is_a_session_grant(home: Path,
                                                                                   workdir: Path) -> None:
    shell = shell_session(workdir, home, columns=220)
    try:
        shell.line(agent_call(call("bash", command="touch one.txt"), description="Touch one"))
        shell.wait_screen("Allow bash: touch one.txt?")
        shell.wait_screen("choice [")
        shell.send("2")  # yes, `touch:*` for this session
        shell.wait_screen("Ran 1 tool call(s)")
        shell.wait_prompt()
        assert (workdir / "one.txt").exists()
        # the session's grant covers the next run's command, and the parent's own
        for name, line in (("two.txt", agent_call(call("bash", command="touch two.txt"), description="Touch two")),
                           ("three.txt", call("bash", command="touch three.txt"))):
            shell.line(line)
            wait_for(lambda name=name: (workdir / name).exists(), what=f"{name}, unasked")
            wait_for(lambda: shell.pump() is None and "Esc interrupts" not in shell.text(), what="the turn's end")
            shell.wait_prompt()
        assert b"Allow bash: touch two" not in shell.raw and b"Allow bash: touch three" not in shell.raw
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
