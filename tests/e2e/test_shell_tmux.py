"""A real session typed into the shell under tmux: a prompt with a tool call on the offline
model, `/rename`, `/exit`, then `commandcode -c` resuming it; the screen and the files checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers.cli import entries, only_transcript, read_lines, read_meta_file
from helpers.terminal import TmuxSession, needs_tmux

pytestmark = [pytest.mark.terminal, needs_tmux]


def test_a_session_typed_in_tmux_then_continued(home: Path, workdir: Path, tmp_path: Path) -> None:
    (workdir / "notes.txt").write_text("draft\n")
    tmux = TmuxSession(workdir, home, tmp_path / "tmux.sock")
    try:
        tmux.wait_screen("checkpoint(s)")
        tmux.line('call edit_file {"file_path": "notes.txt", "old_string": "draft", "new_string": "final"}')
        tmux.wait_screen("Allow edit_file")  # the permission prompt, answered as a user would
        tmux.line("2")  # "Yes, for this session"
        tmux.wait_screen("Ran 1 tool call(s)")
        # the call's line is printed when the turn ends, after the answer shows in the live region
        tmux.wait_until(lambda screen: re.search(r"● edit_file\(notes\.txt\) → The file /\S+…  #1", screen),
                        "the edit's line, on one line cut to fit")
        tmux.line("/rename tmux session")
        tmux.wait_screen("session named 'tmux session'")
        tmux.wait_screen("tmux session · commandcode/offline")  # the status line shows the name
        tmux.line("/exit")
        tmux.wait_screen("resume it with: commandcode -r")
        transcript = only_transcript(home, workdir)
        assert (workdir / "notes.txt").read_text() == "final\n"
        assert read_meta_file(transcript)["title"] == "tmux session"
        assert [entry["type"] for entry in entries(transcript)] == ["message"] * 4 + ["session_info"]
        assert [record["p"] for record in read_lines(home / "history.jsonl")][-2:] == ["/rename tmux session", "/exit"]
    finally:
        tmux.close()
    again = TmuxSession(workdir, home, tmp_path / "tmux2.sock", ["-c"])
    try:
        again.wait_screen(f"resumed session {transcript.stem} (tmux session)")
        again.line("and one more")
        again.wait_screen("You said: and one more")
        again.line("/status")
        again.wait_screen("share", "2 checkpoint(s), 1 backup(s)", "tmux session")
        again.line("/exit")
        again.wait_screen("resume it with")
    finally:
        again.close()
    assert [entry["type"] for entry in entries(transcript)][-2:] == ["message", "message"]
    assert len(read_meta_file(transcript)["traceIds"]) == 2
