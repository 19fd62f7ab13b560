"""`shell/render.py`: streamed text rendered block by block, collapsed tool lines, the
live region's lines, and nothing raw from a hostile tool output reaching the terminal."""

from __future__ import annotations

import pytest

from commandcode.agent.events import TurnEvent
from commandcode.shell.render import (
    LiveTurn,
    Output,
    ToolCall,
    main_argument,
    outcome,
    split_finished_blocks,
    tool_line,
)


class RecordingOutput(Output):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[str] = []

    def write(self, text: str) -> None:
        self.written.append(text)


@pytest.fixture(autouse=True)
def no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")


def test_streamed_text_is_printed_block_by_block_as_each_block_is_finished() -> None:
    output, calls, redraws = RecordingOutput(), [], []
    live = LiveTurn(output, calls, lambda: redraws.append(1))
    for piece in ("Hel", "lo **wo", "rld**"):
        live.on_event(TurnEvent("text", text=piece))
    assert output.written == [] and live.live_lines() == ["Hello **world**"]  # the block being written: live
    live.on_event(TurnEvent("text", text="\n\n```python\nx = 1\n\ny = 2"))
    assert len(output.written) == 1  # the paragraph, rendered, as soon as a blank line closed it
    assert "Hello world" in output.written[0] and "**" not in output.written[0]
    live.on_event(TurnEvent("text", text="\n```"))  # the blank line inside the fence closed nothing
    assert len(output.written) == 1 and live.live_lines()[0] == "```python" and live.live_lines()[-1] == "```"
    live.on_event(TurnEvent("usage", usage={"outputTokens": 5}))
    assert len(output.written) == 2
    rendered = output.written[1]
    assert "x = 1" in rendered and "y = 2" in rendered and "```" not in rendered
    assert live.live_lines() == [] and len(redraws) == 6


@pytest.mark.parametrize(("text", "finished", "rest"), [
    ("one\n\ntwo", "one\n\n", "two"),
    ("one\n\ntwo\n\n", "one\n\ntwo\n\n", ""),
    ("```py\nx\n\ny\n```\n\nafter", "```py\nx\n\ny\n```\n\n", "after"),
    ("```py\nx\n\ny\n", "", "```py\nx\n\ny\n"),  # an open fence holds everything
    ("~~~~\n```\n\n~~~~\n\nz", "~~~~\n```\n\n~~~~\n\n", "z"),  # only its own marker closes a fence
    ("one\n", "", "one\n"),  # no blank line yet
    ("one\n\n\n", "one\n\n", "\n"),
])
def test_split_finished_blocks(text: str, finished: str, rest: str) -> None:
    assert split_finished_blocks(text) == (finished, rest)


def test_a_tool_call_is_one_numbered_line_and_kept_for_expand() -> None:
    output, calls = RecordingOutput(), []
    live = LiveTurn(output, calls, lambda: None)
    live.on_event(TurnEvent("text", text="Let me look."))
    live.on_event(TurnEvent("tool_start", name="bash", input={"command": "ls -la\n| wc"}))
    assert output.written[0].strip() == "Let me look."  # the text before a tool call is printed first
    assert live.live_lines()[-1] == "⋯ bash(ls -la | wc) running — Esc interrupts"
    live.on_event(TurnEvent("tool_end", name="bash", input={"command": "ls -la\n| wc"}, outcome="a\nb\nc"))
    assert output.written[-1].strip() == "● bash(ls -la | wc) → 3 lines  #1"
    assert calls[0].text == "a\nb\nc" and calls[0].done
    output.expanded(1, calls[0])
    assert "a\nb\nc" in output.written[-1]


def test_tool_lines_escape_hostile_text_and_stay_one_line() -> None:
    call = ToolCall("read_file", {"file_path": "evil\x1b]2;pwned\x07.txt"})
    call.text, call.is_error = "Error: \x1b[31mred\nsecond", True
    line = tool_line(2, call)
    assert "\x1b" not in line and "\n" not in line and line.startswith("✗ read_file(evil\\x1b]2;pwned\\x07.txt)")
    assert outcome(call) == "failed: Error: \\x1b[31mred"
    assert main_argument({"x": "y" * 100}).endswith("…") and len(main_argument({"x": "y" * 100})) == 60
    output = RecordingOutput()
    output.plain("bell \x07 and \x1b[2J clear")
    assert "\x07" not in output.written[0] and "\x1b[2J" not in output.written[0]


@pytest.mark.parametrize("width", [40, 80, 97, 120])
def test_a_tool_line_fits_the_terminal_and_keeps_its_number(width: int) -> None:
    """The collapsed line never wraps (CI's longer temporary paths wrapped it at 80 columns)."""
    from rich.cells import cell_len

    call = ToolCall("edit_file", {"file_path": "notes.txt"})
    call.text, call.done = "The file /tmp/pytest-of-root/pytest-461/popen-gw0/test_a_session/work/proj/notes.txt has been updated", True
    line = tool_line(12, call, width)
    assert cell_len(line) <= width - 1 and line.endswith("…  #12") and line.startswith("● edit_file(notes.txt) → The file")
    wide = ToolCall("write_file", {"file_path": "報告" * 30})
    wide.text, wide.done = "done", True
    assert cell_len(tool_line(3, wide, width)) <= width - 1
    assert tool_line(1, ToolCall("bash", {"command": "ls"}), 200) == "● bash(ls) → done  #1"


def test_a_running_sub_agents_progress_is_in_the_live_line_until_the_call_ends() -> None:
    output, calls = RecordingOutput(), []
    live = LiveTurn(output, calls, lambda: None)
    live.on_event(TurnEvent("tool_start", name="agent", input={"description": "Write b"}, tool_use_id="c1"))
    live.on_event(TurnEvent("progress", text="general: write_file \x1b[2Jb.txt", name="agent", tool_use_id="c1"))
    assert live.live_lines()[-1] == "⋯ agent(Write b) running · general: write_file \\x1b[2Jb.txt — Esc interrupts"
    live.on_event(TurnEvent("tool_end", name="agent", input={"description": "Write b"}, outcome="done"))
    live.on_event(TurnEvent("tool_start", name="bash", input={"command": "ls"}))
    assert live.live_lines()[-1] == "⋯ bash(ls) running — Esc interrupts"  # the progress went with its call
