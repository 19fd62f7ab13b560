"""A file tool run by an unprivileged user may not replace a file that user cannot write, even in
a folder the user can write (a temp file + rename would only need the folder): the tool judges
the file as `open(path, "w")` would. The tool really runs as `nobody`, since the suite itself
runs as root, for whom every file is writable: the whole CLI through setpriv when `nobody` can
read this checkout, else a forked process of this one that drops to `nobody` before it runs
the tool."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.cli import cli_env

NOBODY = 65534


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder everyone may write (as a project folder of a shared machine), outside pytest's
    root-only temp folders."""
    folder = Path(tempfile.mkdtemp(prefix="commandcode-unwritable-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _as_nobody(args: list[str], cwd: Path, data: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "commandcode", *args]
    if os.geteuid() == 0:
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    env = cli_env(data, HOME=str(data))
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def _nobody_can_import() -> bool:
    if os.geteuid() != 0:
        return True
    probe = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c",
                            "import commandcode._native, commandcode.agent.tools"], capture_output=True, cwd="/",
                           timeout=60)
    return probe.returncode == 0


def _forked_as_nobody(name: str, tool_input: dict[str, object], cwd: Path) -> str:
    """Runs one tool call in a child process that has dropped to `nobody`; its result text."""
    from commandcode.agent.tools import run_tool

    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
            os.write(write_end, run_tool(name, tool_input, cwd).text.encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        text = pipe.read().decode()
    assert os.waitpid(child, 0)[1] == 0
    return text


@pytest.mark.skipif(os.geteuid() != 0 and os.geteuid() != NOBODY, reason="needs root to become nobody, or to be nobody")
@pytest.mark.parametrize("tool", ["edit_file", "write_file"])
def test_an_unprivileged_user_cannot_replace_a_root_owned_file(tool: str, shared: Path) -> None:
    project, data = shared / "project", shared / "data"
    project.mkdir(mode=0o777)
    data.mkdir(mode=0o777)
    project.chmod(0o777)
    data.chmod(0o777)
    target = project / "owned.txt"
    target.write_text("root's line\n")
    target.chmod(0o644)  # root's file: nobody may read it, not write it
    before = os.stat(target)
    call: dict[str, object] = ({"file_path": str(target), "old_string": "root's", "new_string": "nobody's"}
                               if tool == "edit_file" else {"file_path": str(target), "content": "nobody's line\n"})
    if not _nobody_can_import():  # this checkout is not readable by nobody: the tool in a dropped child
        assert "permission denied" in _forked_as_nobody(tool, call, project)
        assert target.read_text() == "root's line\n" and os.stat(target).st_ino == before.st_ino
        assert "created" in _forked_as_nobody("write_file", {"file_path": str(project / "new.txt"), "content": "x"}, project)
        return
    completed = _as_nobody(["-p", f"call {tool} {json.dumps(call)}", "--yolo", "--output-format", "json"], project, data)
    assert completed.returncode == 0, completed.stderr
    assert target.read_text() == "root's line\n"
    after = os.stat(target)
    assert (after.st_ino, after.st_uid, after.st_mode) == (before.st_ino, before.st_uid, before.st_mode)  # not replaced
    result = json.loads(completed.stdout)
    assert "permission denied" in json.dumps(result), result
    made = project / "new.txt"  # a file nobody may create is still written
    call = {"file_path": str(made), "content": "mine\n"}
    completed = _as_nobody(["-p", f"call write_file {json.dumps(call)}", "--yolo"], project, data)
    assert completed.returncode == 0 and made.read_text() == "mine\n", completed.stderr
    assert made.stat().st_uid == NOBODY or os.geteuid() != 0
