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
from helpers.terminal import ALT_ENTER, ESC, ShellSession, shell_session

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


def test_background_runs_ask_at_the_prompt_one_at_a_time_and_their_ends_are_told(home: Path, workdir: Path) -> None:
    """Two background runs both need asking: their questions come up one after the other (each
    naming its run), the runs wait for the answers, a session-wide answer is a grant of the
    session (the parent's own command then runs unasked), and each run's end is one line at the
    prompt; a run the model collected with `agent_output` is not told again."""
    shell = shell_session(workdir, home, columns=220)
    try:
        _lines(shell, agent_call(call("bash", command="touch one.txt"), description="Touch one", run_in_background=True),
               agent_call(call("bash", command="mkdir made"), description="Make dir", also=True, run_in_background=True))
        asked = re.compile(r"sub-agent general (bg-1-[0-9a-f]{8}|bg-2-[0-9a-f]{8}) asks: Allow bash: (touch one\.txt|mkdir made)\?")
        shell.wait_raw(b" asks: Allow bash: ")
        shell.wait_screen("choice [")
        shell.pump(0.5)  # the other run asks meanwhile: its question waits for this one's answer
        assert shell.raw.count(b" asks: Allow bash: ") == 1, shell.text()
        first = asked.search(shell.raw.decode(errors="replace"))
        assert first, shell.text()
        shell.send("2")  # yes, for this session (`touch:*` or `mkdir:*`)
        shell.wait_count(" asks: Allow bash: ", 2)
        shell.wait_screen("choice [")
        raw = shell.raw.decode(errors="replace")
        second = asked.search(raw[raw.index(first.group(0)) + len(first.group(0)):])
        assert second and second.group(1) != first.group(1), shell.text()
        shell.send("n")
        for match, outcome in ((first, "completed"), (second, "completed")):
            description = "Touch one" if match.group(2).startswith("touch") else "Make dir"
            shell.wait_screen(f"sub-agent general {match.group(1)} {outcome} · {description}")
        granted, refused = ("one.txt", "made") if first.group(2).startswith("touch") else ("made", "one.txt")
        assert (workdir / granted).exists() and not (workdir / refused).exists()
        shell.wait_prompt()
        # the first answer was for the session: the parent's own command of that program runs unasked
        parent = call("bash", command="touch parent.txt" if granted == "one.txt" else "mkdir parent")
        shell.line(parent)
        wait_for(lambda: (workdir / ("parent.txt" if granted == "one.txt" else "parent")).exists(), what="unasked")
        wait_for(lambda: shell.pump() is None and "Esc interrupts" not in shell.text(), what="the turn's end")
        shell.wait_prompt()
        assert shell.raw.count(b"Allow bash: ") == 2
        # a run the model waited for is not told again
        _lines(shell, agent_call(call("write_file", file_path="$COMMANDCODE_SCRATCHPAD/x.txt", content="x"),
                                 description="Collected", run_in_background=True),
               call("agent_output", agent_id="{{agent_id}}"))
        shell.wait_screen("• agent_output: agent_id: bg-3-")
        shell.wait_prompt()
        shell.pump(0.5)
        files = SessionFiles.for_transcript(only_transcript(home, workdir))
        assert sorted(meta["status"] for meta in run_metas(files).values()) == ["completed"] * 3
        assert "completed · Collected" not in shell.raw.decode()
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()


def _lines(shell: ShellSession, *lines: str) -> None:
    """Sends a prompt of several lines (Alt+Enter between them), then Enter."""
    for line in lines[:-1]:
        shell.send(line)
        shell.send(ALT_ENTER)
    shell.line(lines[-1])


def test_an_agent_with_show_output_has_its_final_message_shown_whole(home: Path, workdir: Path) -> None:
    """`showOutput: true` (the real CLI's custom-agents.md): the run's final message is shown whole
    in the feed under its call (foreground) or under its end line (background); without it the
    call stays one folded line."""
    agents = workdir / ".commandcode" / "agents"
    agents.mkdir(parents=True)
    (agents / "shower.md").write_text('---\nname: shower\ndescription: shows\ntools: "*"\nshowOutput: true\n---\nShow.\n')
    shell = shell_session(workdir, home, ["--yolo"], columns=200)
    try:
        shell.line(agent_call(call("bash", command="echo hidden-marker"), description="Plain"))
        shell.wait_screen("Ran 1 tool call(s)")
        shell.wait_prompt()
        shell.line(agent_call(call("bash", command="echo fg-marker"), description="Shown", subagent_type="shower"))
        shell.wait_screen("• bash: fg-marker")
        shell.wait_prompt()
        shell.line(agent_call(call("bash", command="echo bg-marker"), description="Shown late", subagent_type="shower",
                              run_in_background=True))
        screen = shell.wait_screen("• bash: bg-marker")
        assert re.search(r"sub-agent shower bg-3-[0-9a-f]{8} completed · Shown late\nRan 1 tool call\(s\):\n\n • bash: bg-marker",
                         screen), screen
        assert "• bash: hidden-marker" not in shell.text()
        shell.line("/exit")
        assert shell.wait_exit() == 0
    finally:
        shell.close()
