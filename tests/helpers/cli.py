"""Helpers for the CLI, writer and sample tests: real `commandcode`
processes, transcript readers, tree snapshots and a process that holds a writer lock.

Every run is `commandcode ...` (`run_cli` forks it from a fork server, `start_cli` starts
`[sys.executable, "-m", "commandcode", ...]`) with `COMMANDCODE_HOME` set to
the test's own data dir, `COMMANDCODE_INDEX=off`, `NO_COLOR=1` and `COMMANDCODE_SCRATCHPAD_BASE=SCRATCHPAD_BASE`.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from commandcode import cli as _cli
from commandcode.config.paths import project_dir
from helpers import forked_cli
from helpers.locations import SAMPLES_HOME

SAMPLE_DATA = SAMPLES_HOME / ".commandcode"
needs_samples = pytest.mark.skipif(not SAMPLE_DATA.is_dir(), reason=f"the real CLI's sample files are not at {SAMPLES_HOME}")
SAMPLE_PROJECT_CWD = "/home/dev/proj"
SAMPLE_SLUG = "home-dev-proj"

ENTRY_ID = re.compile(r"^[0-9a-f]{8}$")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
ENVELOPE = ["type", "id", "parentId", "timestamp"]
HEADER_KEYS = ["type", "version", "id", "timestamp", "cwd"]
LISTING_FIELDS_REQUIRED = frozenset({"id", "name", "created", "modified", "message_count", "first_message", "git_branch",
                                     "entrypoint", "parent_session_id", "path"})


# --------------------------------------------------------------------------------------------
# Running the CLI

# The argv runner, bound at collection: once an in-process `-p` imports the `commandcode.cli.run`
# submodule (typer's CliRunner tests do), the package attribute `cli.run` names that module.
_RUN_ARGV = _cli.run


SCRATCHPAD_BASE = tempfile.mkdtemp(prefix="commandcode-test-scratchpads-")
"""`COMMANDCODE_SCRATCHPAD_BASE` of every `commandcode` the suite runs (removed when it exits);
a run's scratchpads are `<it>/commandcode-<uid>/<sanitized cwd>/<sid>/scratchpad`."""
atexit.register(shutil.rmtree, SCRATCHPAD_BASE, True)


def cli_env(data: Path, **extra: str) -> dict[str, str]:
    """The environment of a `commandcode` subprocess that uses the data dir `data`. `COLUMNS` and
    `LINES` are dropped (pytest-xdist's workers set 80x24), so a terminal test's pty size is the
    size the program sees."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("COMMANDCODE_") and key not in ("COLUMNS", "LINES")}
    env.update({"COMMANDCODE_HOME": str(data), "COMMANDCODE_INDEX": "off", "NO_COLOR": "1",
                "PYTHONUNBUFFERED": "1", "GIT_CONFIG_NOSYSTEM": "1",
                # the scratchpads of the suite's runs, not in the machine's /tmp/commandcode-<uid>
                "COMMANDCODE_SCRATCHPAD_BASE": SCRATCHPAD_BASE})
    env.update(extra)
    return env


def run_in_process(argv: list[str]) -> tuple[object, str, str]:
    """Runs one command line in this process (`commandcode.cli.run`, as `main()` does without
    exiting): `(exit code, stdout, stderr)`. For tests that run hundreds of commands. Like the
    exit of `main()`, it waits for the restores still settling (`store.settle_and_warn`)."""
    from commandcode.checkpoints.store import settle_and_warn

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = _RUN_ARGV(argv)
        settle_and_warn()
    return code, out.getvalue(), err.getvalue()


def run_cli(args: list[str], cwd: Path, data: Path, *, timeout: float = 60, no_tty: bool = False,
            fresh: bool = False, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """Runs `commandcode ARGS` in `cwd` and waits for it (`no_tty`: in a session of its own, so it
    has no controlling terminal even when the suite runs in one); `run_process` says how."""
    completed = run_process(args, cwd, cli_env(data, **extra_env), timeout=timeout, new_session=no_tty, fresh=fresh)
    return subprocess.CompletedProcess(completed.args, completed.returncode, forked_cli.text(completed.stdout),
                                       forked_cli.text(completed.stderr))


def run_process(args: list[str], cwd: Path, env: dict[str, str], *, timeout: float = 60, new_session: bool = False,
                fresh: bool = False) -> subprocess.CompletedProcess[bytes]:
    """Runs `commandcode ARGS` in `cwd` with exactly `env`, its streams as bytes.

    The run is a process of its own, forked from this test process's fork server
    (`helpers.forked_cli.shared`: Python started and the CLI imported once), not a new interpreter:
    most of a short command's time was the start-up. `fresh` (or a run while another thread of
    the test has the server) starts `python -m commandcode` instead, for a test about the start-up
    itself or what an interpreter reads only then."""
    if not fresh:
        with forked_cli.shared(env) as server:
            if server is not None:
                return server.run_bytes(args, cwd, env, timeout=timeout, new_session=new_session)
    return subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, start_new_session=new_session)


# The capabilities that let root read and write whatever the permission bits say (the suite
# runs as root): without them, a mode or a read-only folder refuses root as it refuses a user.
_PERMISSIONS_APPLY = ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def run_as_user(args: list[str], cwd: Path, data: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """`run_cli`, with file permissions applying as they do for a user who is not root (as root,
    through `setpriv` without the capabilities that bypass them; the test is skipped when there
    is no `setpriv`)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv to run without root's file capabilities")
        prefix = _PERMISSIONS_APPLY
    return subprocess.run([*prefix, sys.executable, "-m", "commandcode", *args], cwd=cwd,
                          env=cli_env(data, **extra_env), capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def run_ok(args: list[str], cwd: Path, data: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """Runs `commandcode ARGS` (with `extra_env` added to its environment) and asserts it succeeded."""
    completed = run_cli(args, cwd, data, **extra_env)
    assert completed.returncode == 0, f"{args} failed:\nstdout: {completed.stdout}\nstderr: {completed.stderr}"
    return completed


def run_json(args: list[str], cwd: Path, data: Path) -> Any:
    """Runs `commandcode ARGS` (which should print JSON) and returns the parsed output."""
    return json.loads(run_ok(args, cwd, data).stdout)


def start_cli(args: list[str], cwd: Path, data: Path) -> subprocess.Popen[str]:
    """Starts `commandcode ARGS` in its own process group (so a test can kill all of it), with
    SIGINT and SIGQUIT at their defaults, as a terminal's shell starts a program: a suite run as
    a background job inherits them ignored, and a Ctrl+C test would then send a signal nobody
    hears (Python keeps an inherited SIG_IGN instead of raising `KeyboardInterrupt`)."""
    return subprocess.Popen([sys.executable, "-m", "commandcode", *args], cwd=cwd, env=cli_env(data),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True, preexec_fn=_default_interrupts)


def _default_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def kill_group(process: subprocess.Popen[str]) -> None:
    """SIGKILLs the process group this test started with `start_new_session`, then reaps it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate(timeout=30)


def assert_error_lines(completed: subprocess.CompletedProcess[str], *, error_contains: str = "", exit_code: int = 1) -> str:
    """Asserts `exit_code` (1: refused or failed; 2: a usage error) and a stderr of exactly one
    `error:` line plus one `hint:` line; returns the error line."""
    assert completed.returncode == exit_code, completed
    lines = completed.stderr.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("error: "), lines
    assert lines[1].startswith("hint: "), lines
    assert error_contains in lines[0], lines
    return lines[0]


def wait_for(predicate: Any, *, timeout: float = 30, what: str = "condition") -> None:
    """Polls `predicate()` until it is true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


# --------------------------------------------------------------------------------------------
# Reading what was written


def transcripts(data: Path, cwd: Path | None = None) -> list[Path]:
    """Transcript files (no sidecars) of one project, or of every project."""
    folders = [project_dir(cwd)] if cwd is not None else sorted((data / "projects").glob("*"))
    found = []
    for folder in folders:
        found += [path for path in folder.glob("*.jsonl")
                  if not any(marker in path.name for marker in (".checkpoints.", ".prompts.", ".v2.bak"))]
    return sorted(found)


def only_transcript(data: Path, cwd: Path) -> Path:
    """The one transcript of `cwd`'s project."""
    found = transcripts(data, cwd)
    assert len(found) == 1, found
    return found[0]


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL file, parsed (fails on a line that is not JSON)."""
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


def entries(path: Path) -> list[dict[str, Any]]:
    """The entry lines of a transcript (the header dropped)."""
    lines = read_lines(path)
    assert lines[0]["type"] == "session"
    return lines[1:]


def read_meta_file(files_transcript: Path) -> dict[str, Any]:
    """The meta sidecar next to a transcript."""
    return json.loads(files_transcript.with_name(files_transcript.name[: -len(".jsonl")] + ".meta.json").read_text())


CATALOG_FILES = ("catalog.sqlite3", "catalog.sqlite3-wal", "catalog.sqlite3-shm", "catalog.sqlite3-journal")


def snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every file and folder under `root`: relative path → (bytes, or None for a folder; mode bits).
    The session catalog (`catalog.sqlite3*` in a data dir) is left out: it is a cache that every
    listing and lookup brings up to date, not a file a command may leave alone."""
    out: dict[str, tuple[bytes | None, int]] = {}
    if not root.exists():
        return out
    for folder, folders, names in os.walk(root):
        for name in folders:
            path = os.path.join(folder, name)
            out[os.path.relpath(path, root) + "/"] = (None, os.lstat(path).st_mode & 0o7777)
        for name in names:
            if name in CATALOG_FILES:
                continue
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                out[os.path.relpath(path, root)] = (handle.read(), os.lstat(path).st_mode & 0o7777)
    return out


def copy_samples(destination: Path) -> Path:
    """Copies the real sample home into `destination`; returns the copied `.commandcode` data dir."""
    shutil.copytree(SAMPLES_HOME, destination, symlinks=True)
    return destination / ".commandcode"


# --------------------------------------------------------------------------------------------
# A second process that holds a session open for writing

_HOLDER_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from commandcode.sessions.files import SessionFiles
    from commandcode.sessions.writer import SessionWriter

    files = SessionFiles.for_transcript(Path(sys.argv[1]))
    with SessionWriter(files, sys.argv[2]) as writer:
        print("ready", flush=True)
        time.sleep(float(sys.argv[3]))
    """
)


def hold_writer(transcript: Path, cwd: Path, data: Path, seconds: float = 60) -> subprocess.Popen[str]:
    """Starts a process that opens a `SessionWriter` on `transcript` and sleeps; returns once it holds the lock."""
    process = subprocess.Popen([sys.executable, "-c", _HOLDER_SCRIPT, str(transcript), str(cwd), str(seconds)],
                               cwd=cwd, env=cli_env(data), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL)
    assert process.stdout is not None
    line = process.stdout.readline()
    if line.strip() != "ready":
        process.kill()
        _, error = process.communicate(timeout=30)
        raise AssertionError(f"the lock holder did not start: {line!r} {error}")
    return process


def stop(process: subprocess.Popen[str]) -> None:
    """Terminates a process this test started, by its pid, and reaps it."""
    if process.poll() is None:
        process.terminate()
    process.communicate(timeout=30)
