"""`/copy` and the clipboard service, with a fake shell and stand-in clipboard programs on PATH."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from commandcode.errors import CommandcodeError
from commandcode.present import clipboard
from commandcode.shell.commands.copy import COMMANDS, last_reply


class FakeHandle:
    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages


class FakeAgent:
    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.handle = FakeHandle(messages)


class FakeShell:
    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.agent = FakeAgent(messages)
        self.copied: list[str] = []
        self.notices: list[str] = []

    def copy(self, text: str) -> str:
        self.copied.append(text)
        return "copied"

    def notice(self, text: str) -> None:
        self.notices.append(text)


def _run(shell: FakeShell, args: str = "") -> None:
    COMMANDS[0].run(shell, args)  # type: ignore[arg-type]


def test_copy_takes_the_last_assistant_text() -> None:
    shell = FakeShell([{"role": "assistant", "content": [{"type": "text", "text": "old"}]},
                       {"role": "user", "content": [{"type": "text", "text": "q"}]},
                       {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"},
                                                         {"type": "text", "text": "first"},
                                                         {"type": "tool_use", "id": "1", "name": "x", "input": {}},
                                                         {"type": "text", "text": "second"}]},
                       {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "content": []}]}])
    _run(shell)
    assert shell.copied == ["first\n\nsecond"] and shell.notices == ["copied"]


def test_copy_refuses_without_a_reply_and_with_arguments() -> None:
    with pytest.raises(CommandcodeError, match="nothing to copy"):
        _run(FakeShell([{"role": "user", "content": "hi"}]))
    with pytest.raises(CommandcodeError, match="no arguments"):
        _run(FakeShell([{"role": "assistant", "content": "hi"}]), "x")
    assert last_reply([{"role": "assistant", "content": "plain"}]) == "plain"


def _stand_in(folder: Path, name: str, code: int = 0) -> Path:
    record = folder / f"{name}.input"
    script = folder / name
    script.write_text(f"#!/bin/sh\ncat > '{record}'\necho \"$@\" > '{record}.args'\nexit {code}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return record


def test_osc52_goes_to_the_terminal_and_a_tool_copies_too(tmp_path: Path) -> None:
    record = _stand_in(tmp_path, "xclip")
    written: list[bytes] = []
    line = clipboard.copy("héllo", env={"PATH": str(tmp_path), "DISPLAY": ":0"}, terminal=written.append)
    assert written == [b"\x1b]52;c;aMOpbGxv\x07"]
    assert record.read_text() == "héllo" and (tmp_path / "xclip.input.args").read_text().split() == ["-selection", "clipboard"]
    assert line == "copied 5 characters to the clipboard (OSC 52, xclip)"


def test_a_failing_tool_falls_through_to_the_next(tmp_path: Path) -> None:
    _stand_in(tmp_path, "wl-copy", code=1)
    record = _stand_in(tmp_path, "pbcopy")
    line = clipboard.copy("x", env={"PATH": str(tmp_path), "WAYLAND_DISPLAY": "w"}, terminal=None)
    assert record.read_text() == "x" and line.endswith("(pbcopy)")


def test_nothing_works_says_so_in_one_line(tmp_path: Path) -> None:
    line = clipboard.copy("x", env={"PATH": str(tmp_path)}, terminal=None)
    assert line.startswith("could not copy") and "\n" not in line
    assert os.listdir(tmp_path) == []
