"""Both programs on one data dir, as a user switching between them: our turns (`write_file`
edits, `bash` commands), rewinds and redos through `python -m commandcode`, and the real Command
Code CLI's turns, resumes and `/rewind` (its TUI, in tmux, `real_code_rewind`). `real_can_restore`
is the check the real CLI's restore makes before it writes anything (ref §4.2 step 2: every blob
of every checkpoint from the newest down to the one chosen is in `file-history/<sid>/`), here for
every checkpoint it lists; `ours_can_restore` is our dry run for every checkpoint we list."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from helpers.cli import run_cli, run_ok
from helpers.real_cli import RealCli, keys, real_tui, screen_text, slash, wait_screen


def our_turn(cwd: Path, data: Path, title: str, *calls: tuple[str, dict[str, object]], session: str | None = None) -> None:
    """One turn of ours whose prompt's first line is `title` (its checkpoint's prompt)."""
    lines = [title, *(f"call {tool} {json.dumps(tool_input)}" for tool, tool_input in calls)]
    resume = ["-r", session] if session else []
    run_ok([*resume, "--yolo", "--model", "commandcode/offline", "-p", "\n".join(lines)], cwd, data)


def write_call(path: str, content: str) -> tuple[str, dict[str, object]]:
    return "write_file", {"file_path": path, "content": content}


def bash_call(command: str) -> tuple[str, dict[str, object]]:
    return "bash", {"command": command}


def real_turn(real: RealCli, session: str, title: str, *writes: tuple[Path, str]) -> None:
    """One real-CLI turn resuming `session`: `title`, then a `write_file` per `(path, content)`."""
    directives = "".join(f" [[tool write_file {json.dumps({'file_path': str(path), 'content': content})}]]"
                         for path, content in writes)
    real("-r", session, "-p", title + directives)


def tree(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): path.read_text() for path in sorted(root.rglob("*")) if path.is_file()}


def checkpoints_file(data: Path, session: str) -> Path:
    [path] = list((data / "projects").glob(f"*/{session}.checkpoints.jsonl"))
    return path


def parsed_records(path: Path) -> list[dict[str, Any]]:
    """The records of a checkpoints file the real CLI lists: every line `JSON.parse` accepts."""
    records = []
    for line in path.read_text().split("\n"):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def real_listed(data: Path, session: str) -> list[dict[str, Any]]:
    """The records the real CLI lists for `session`."""
    return parsed_records(checkpoints_file(data, session))


def real_can_restore(data: Path, session: str) -> list[str]:
    """What the real CLI's restore to each checkpoint it lists would refuse (empty: it restores
    every one): a blob missing from `file-history/<sid>/` or holding other bytes."""
    folder = data / "file-history" / session
    refused = []
    for record in real_listed(data, session):
        for item in record.get("files") or []:
            digest = item.get("hash")
            if digest is None or item.get("skipped"):
                continue
            blob = folder / str(digest)
            if not blob.is_file() or hashlib.sha256(blob.read_bytes()).hexdigest() != digest:
                refused.append(f"turn {record.get('turnNumber')} ({record.get('prompt')}): {item.get('path')}")
    return refused


def ours_can_restore(cwd: Path, data: Path, session: str) -> list[str]:
    """What our code rewind to each checkpoint we list would refuse for want of a backup (a dry
    run; outside edits do not count, a `--force` restores over them)."""
    listed = json.loads(run_ok(["checkpoints", "list", session, "--all", "--json"], cwd, data).stdout)["checkpoints"]
    refused = []
    for record in listed:
        if not record["files"]:
            continue
        done = run_cli(["rewind", session, "--to", str(record["number"]), "--mode", "code", "--dry-run", "--json"],
                       cwd, data)
        if done.returncode != 0:
            refused.append(f"checkpoint {record['number']}: {done.stderr.strip()[:300]}")
            continue
        refused.extend(f"checkpoint {record['number']}: {problem['message']}"
                       for problem in json.loads(done.stdout)["problems"] if problem["code"] != "changed_outside")
    return refused


def _wait_any(name: str, texts: tuple[str, ...], timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout  # only to detect a hang
    while time.monotonic() < deadline:
        screen = screen_text(name)
        if any(text in screen for text in texts):
            return screen
        time.sleep(0.3)
    raise AssertionError(f"none of {texts} appeared on the screen:\n{screen_text(name)}")


def _select(name: str, wanted: str, key: str, tries: int) -> None:
    """Moves a menu's cursor with `key` until the row starting with `wanted` is chosen; picks it."""
    for _ in range(tries):
        if f"> {wanted}" in screen_text(name):
            break
        keys(name, key)
    wait_screen(name, f"> {wanted}")
    keys(name, "Enter")


def rewind_in_tui(name: str, prompt: str, choice: str) -> str:
    """`/rewind` in an open real-CLI TUI: the checkpoint whose prompt starts with `prompt`, then
    `choice` ("Code only", "Both"...); returns the screen once it says how it went."""
    slash(name, "/rewind")
    wait_screen(name, "Select a checkpoint")
    _select(name, prompt, "Up", 20)
    wait_screen(name, "Code only")
    _select(name, choice, "Down", 4)
    return _wait_any(name, ("Restored to checkpoint", "Restore verification failed", "messages removed", "rror"))


def real_code_rewind(real: RealCli, cwd: Path, session: str, tmp_path: Path, *prompts: str,
                     choice: str = "Code only") -> list[str]:
    """The real CLI's `/rewind` to each checkpoint of `prompts` in turn, each in a TUI of its own
    (after a rewind it puts the prompt back in its input line); the screens."""
    screens = []
    for prompt in prompts:
        with real_tui(real, cwd, session, tmp_path) as name:
            screens.append(rewind_in_tui(name, prompt, choice))
    return screens


def real_resume(real: RealCli, cwd: Path, session: str, tmp_path: Path) -> None:
    """The real CLI's TUI resuming `session` and quitting, no turn taken: its resume cleanup
    (every blob no line it parses names is deleted) runs, and no record is rewritten (a turn of
    it would rewrite the checkpoints file without the lines it cannot parse)."""
    with real_tui(real, cwd, session, tmp_path):
        pass
