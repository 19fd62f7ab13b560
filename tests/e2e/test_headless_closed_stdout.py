"""`-p` whose stdout goes away (issue 26 §5): the reader closes the pipe before the first event,
after the first one (`| head -1`), or descriptor 1 is closed outright. The turn must still run
its tools and be saved as the user typed it (before: aborted, saved as a failed turn whose user
message was `Error: [Errno 32] Broken pipe`, or nothing saved at all); the output is lost, the
exit code is 1 with one `error:` line, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import cli_env, only_transcript

PROMPT = ('call write_file {"file_path": "a.txt", "content": "x"}\n'
          'call bash {"command": "sleep 0.3; echo hi > b.txt"}')


def _start(workdir: Path, home: Path, output_format: str, stdout: int | None, close_fd: bool) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "commandcode", "-p", PROMPT, "--output-format", output_format, "--yolo"]
    if close_fd:
        command = ["sh", "-c", 'exec "$@" >&-', "sh", *command]
    return subprocess.Popen(command, cwd=workdir, env=cli_env(home), stdin=subprocess.DEVNULL, stdout=stdout,
                            stderr=subprocess.PIPE)


@pytest.mark.parametrize("output_format", ["stream-json", "json", "text"])
@pytest.mark.parametrize("how", ["closed-before", "after-first-line", "fd-closed"])
def test_the_turn_runs_and_is_saved_as_typed(home: Path, workdir: Path, output_format: str, how: str) -> None:
    if how == "after-first-line" and output_format != "stream-json":
        pytest.skip("only stream-json writes before the turn ends")
    if how == "closed-before":
        read_end, write_end = os.pipe()
        os.close(read_end)
        process = _start(workdir, home, output_format, write_end, False)
        os.close(write_end)
    elif how == "fd-closed":
        process = _start(workdir, home, output_format, None, True)
    else:
        process = _start(workdir, home, output_format, subprocess.PIPE, False)
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        assert first["type"] == "system"
        process.stdout.close()
    _, stderr_bytes = process.communicate(timeout=120)
    stderr = stderr_bytes.decode()
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert (workdir / "a.txt").read_text() == "x" and (workdir / "b.txt").read_text() == "hi\n"
    entries = [json.loads(line) for line in only_transcript(home, workdir).read_text().splitlines()]
    users = [block["text"] for entry in entries if entry.get("type") == "message"
             and entry["message"]["role"] == "user" for block in entry["message"]["content"] if block["type"] == "text"]
    assert users == [PROMPT]
    assert not any("Broken pipe" in json.dumps(entry) for entry in entries)
    if process.returncode != 0:  # the output was lost: one line says so, and where the turn is
        assert process.returncode == 1
        assert stderr.startswith("error: stdout was closed, so the output was lost; the turn ran and is saved")
    else:
        assert how == "after-first-line", "a run whose output was all lost cannot succeed quietly"
