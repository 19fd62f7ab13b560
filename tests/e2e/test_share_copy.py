"""`commandcode share REF` copies the link as `/copy` does (`present/clipboard.py`), through a real
share server: a stand-in `xclip` on PATH records what it was given, a real pty receives the OSC 52
sequence (after the question is answered there), `--no-copy` leaves the clipboard alone, and with
no way to copy, one line says so while the share still succeeds."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

import pytest

from helpers.cli import run_cli, run_ok
from helpers.share import share_server
from helpers.terminal import ShellSession
from helpers.transcripts import TranscriptBuilder, one_turn_session


def _session(home: Path, workdir: Path) -> TranscriptBuilder:
    return one_turn_session(home, workdir, "shared prompt")[0]


def _stand_in_xclip(folder: Path) -> Path:
    """An `xclip` that appends its arguments and its input to `folder/xclip.log`."""
    folder.mkdir()
    log = folder / "xclip.log"
    tool = folder / "xclip"
    tool.write_text(f"#!/bin/sh\n{{ echo \"args: $*\"; cat; echo; echo '--'; }} >> '{log}'\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return log


def _env(tools: Path) -> dict[str, str]:
    return {"PATH": f"{tools}:{os.environ['PATH']}", "DISPLAY": ":99", "TMUX": "", "WAYLAND_DISPLAY": ""}


def test_share_prints_the_link_and_copies_it(home: Path, workdir: Path, tmp_path: Path) -> None:
    builder = _session(home, workdir)
    log = _stand_in_xclip(tmp_path / "bin")
    with share_server(home, workdir):
        completed = run_cli(["share", builder.session_id, "--yes"], workdir, home, no_tty=True, **_env(tmp_path / "bin"))
        assert completed.returncode == 0, completed.stderr
        url = completed.stdout.strip()
        assert url.startswith("http://127.0.0.1:") and builder.session_id in url
        assert f"copied {len(url)} characters to the clipboard (xclip)" in completed.stderr
        assert log.read_text() == f"args: -selection clipboard\n{url}\n--\n"
        again = run_cli(["share", builder.session_id, "--yes"], workdir, home, no_tty=True, **_env(tmp_path / "bin"))
        assert again.stdout.strip() == url  # sharing again re-copies the same link
        assert log.read_text().count(url) == 2
        run_ok(["unshare", builder.session_id], workdir, home)
        assert run_cli(["share", builder.session_id, "--yes", "--no-copy"], workdir, home, no_tty=True,
                       **_env(tmp_path / "bin")).stderr.count("copied") == 0
        assert log.read_text().count("args:") == 2  # --no-copy never ran the clipboard tool


def test_with_no_way_to_copy_one_line_says_so_and_the_share_stands(home: Path, workdir: Path, tmp_path: Path) -> None:
    builder = _session(home, workdir)
    (tmp_path / "empty").mkdir()
    with share_server(home, workdir):
        # no controlling terminal for OSC 52, no tmux, no clipboard tool on PATH
        completed = run_cli(["share", builder.session_id, "--yes"], workdir, home, no_tty=True,
                            PATH=str(tmp_path / "empty"), DISPLAY="", TMUX="", WAYLAND_DISPLAY="")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().startswith("http://127.0.0.1:")
    lines = [line for line in completed.stderr.splitlines() if "copy" in line]
    assert len(lines) == 1 and lines[0].startswith("could not copy: ")
    assert "Traceback" not in completed.stderr


@pytest.mark.terminal  # a real pseudo-terminal (ShellSession)
def test_in_a_terminal_the_link_goes_out_as_osc_52_after_the_question(home: Path, workdir: Path, tmp_path: Path) -> None:
    builder = _session(home, workdir)
    (tmp_path / "empty").mkdir()
    with share_server(home, workdir):
        terminal = ShellSession(workdir, home, ["share", builder.session_id], DISPLAY="", TMUX="", WAYLAND_DISPLAY="")
        try:
            terminal.wait_screen("Share 2 message(s)")
            assert b"\x1b]52;" not in terminal.raw  # nothing is copied before the user says yes
            terminal.line("y")
            terminal.wait_screen("copied")
            assert terminal.wait_exit() == 0
        finally:
            terminal.close()
    url = next(line.strip() for line in terminal.text().splitlines() if line.strip().startswith("http://127.0.0.1:"))
    assert b"\x1b]52;c;" + base64.b64encode(url.encode()) + b"\x07" in terminal.raw
    assert f"copied {len(url)} characters to the clipboard (OSC 52)" in terminal.text()
