"""Helpers for the workspace tests (scratchpad, sweep, archives, footprint, worktrees): real git
repositories, sessions made by the real CLI and then aged, and a private scratchpad base.

- `git_repo(path)`: a repository with one commit on `main` (and `git(...)` to run more);
- `make_session(home, cwd, prompt)`: one `commandcode -p` turn; returns the transcript;
- `age_session(transcript, days)`: shifts every `timestamp` of the transcript `days` back (the
  sweep judges by the newest entry's time, never the file's mtime);
- `scratch_base` fixture: `COMMANDCODE_SCRATCHPAD_BASE` in the test's own folder.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from helpers.cli import only_transcript, run_ok, transcripts

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    """Runs git in `cwd` (check=True) and returns its stdout."""
    completed = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                               env={**os.environ, **GIT_ENV}, timeout=60)
    return completed.stdout


def git_repo(path: Path, *, commit: bool = True) -> Path:
    """A fresh repository at `path` on branch `main`, with one commit of `README.md` unless told not to."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    if commit:
        (path / "README.md").write_text("hello\n")
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", "first")
    return path.resolve()


def make_session(home: Path, cwd: Path, prompt: str = "hello") -> Path:
    """Runs one `commandcode -p PROMPT --yolo` in `cwd` (a headless `bash` call needs the bypass
    mode); returns the new transcript."""
    before = set(transcripts(home, cwd))
    run_ok(["-p", prompt, "--yolo"], cwd, home)
    after = [path for path in transcripts(home, cwd) if path not in before]
    assert len(after) == 1, after
    return after[0]


def age_session(transcript: Path, days: float) -> None:
    """Moves every `timestamp` in the transcript `days` into the past (the bytes are rewritten
    through a temp file, as a real CLI copy from long ago would look)."""
    lines = []
    for line in transcript.read_bytes().split(b"\n"):
        if not line:
            lines.append(line)
            continue
        value = json.loads(line)
        if isinstance(value.get("timestamp"), str):
            moment = datetime.strptime(value["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
            value["timestamp"] = (moment - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        lines.append(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    temporary = transcript.with_name(transcript.name + ".tmp")
    temporary.write_bytes(b"\n".join(lines))
    os.replace(temporary, transcript)


@pytest.fixture
def scratch_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`COMMANDCODE_SCRATCHPAD_BASE` pointing into the test's folder (the base is `<it>/commandcode-<uid>`)."""
    base = tmp_path / "scratch"
    base.mkdir()
    monkeypatch.setenv("COMMANDCODE_SCRATCHPAD_BASE", str(base))
    yield base


__all__ = ["age_session", "git", "git_repo", "make_session", "only_transcript", "scratch_base"]


def store_only_checkpoints(project: Path) -> None:
    """Checkpoints of `project` only in our store: `checkpoints.trackShell` off (its baseline would
    put every project file into the store) and `compatibleBackups` off (no raw blobs in
    `file-history/`), for the tests that count the store's objects and a session's bytes."""
    (project / ".commandcode").mkdir(exist_ok=True)
    (project / ".commandcode" / "settings.json").write_text(
        '{"checkpoints": {"trackShell": false, "compatibleBackups": false}}\n')
