"""Sessions written straight to disk, as the real CLI lays them out (format doc §1-§3), for tests
that need many sessions, or exact ones, faster than running turns: `write_session` writes a v3
transcript (header, then alternating user/assistant messages, optionally a tool call) and its
meta sidecar into the project folder of `cwd`, and `append_turn` adds a turn to one.
`write_claude_session` writes a small Claude Code transcript (one prompt, one reply) under a
Claude config dir, as Claude Code files it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from commandcode.config.paths import project_dir


def _line(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n"


def _message(entry_id: str, parent: str | None, role: str, content: list[dict[str, Any]], when: str) -> str:
    return _line({"type": "message", "id": entry_id, "parentId": parent, "timestamp": when,
                  "message": {"role": role, "content": content}})


def turn_lines(number: int, parent: str | None, prompt: str, *, when: str, tool: dict[str, Any] | None = None,
               result: str | None = None) -> tuple[str, str]:
    """The lines of one turn (user prompt, maybe a tool call and its result, a reply) and the id of its last entry."""
    user, reply = f"{number:04x}0001", f"{number:04x}0002"
    lines = _message(user, parent, "user", [{"type": "text", "text": prompt}], when)
    last = user
    if tool is not None:
        call, answer = f"{number:04x}0003", f"{number:04x}0004"
        lines += _message(call, last, "assistant", [{"type": "tool_use", "id": f"call_{number}", "name": tool["name"],
                                                     "input": tool["input"]}], when)
        lines += _message(answer, call, "user", [{"type": "tool_result", "tool_use_id": f"call_{number}",
                                                  "content": [{"type": "text", "text": result or "ok"}]}], when)
        last = answer
    lines += _message(reply, last, "assistant", [{"type": "text", "text": f"reply to: {prompt}"}], when)
    return lines, reply


def write_session(cwd: Path, session_id: str, prompts: list[str], *, meta: dict[str, Any] | None = None,
                  when: str = "2026-01-02T03:04:05.000Z", tool: dict[str, Any] | None = None,
                  result: str | None = None, header_cwd: str | None = None) -> Path:
    """Writes a session of `cwd` with one turn per prompt; returns its transcript.

    The default `when` is months old: a test that starts the interactive shell over such sessions
    sees the shell's daily auto-sweep archive them (older than `cleanupPeriodDays`, not renamed),
    so it passes recent timestamps (`tests/e2e/test_shell_resume_picker.py`)."""
    folder = project_dir(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    body = _line({"type": "session", "version": 3, "id": session_id, "timestamp": when,
                  "cwd": header_cwd if header_cwd is not None else str(cwd)})
    parent = None
    for number, prompt in enumerate(prompts):
        lines, parent = turn_lines(number, parent, prompt, when=when, tool=tool if number == 0 else None, result=result)
        body += lines
    transcript = folder / f"{session_id}.jsonl"
    transcript.write_text(body, encoding="utf-8")
    if meta is not None:
        (folder / f"{session_id}.meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return transcript


def append_turn(transcript: Path, number: int, prompt: str, *, when: str = "2026-01-02T04:00:00.000Z") -> None:
    """Appends one turn, chained to the transcript's last entry."""
    last = json.loads(transcript.read_text(encoding="utf-8").splitlines()[-1])
    lines, _ = turn_lines(number, last.get("id"), prompt, when=when)
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(lines)


def sid(number: int) -> str:
    """A session id (a UUID v4 shape) numbered `number`."""
    return f"5e551015-0000-4000-8000-{number:012d}"


def write_claude_session(claude_dir: Path, cwd: Path, session_id: str, prompt: str, reply: str, *,
                         when: str = "2026-02-01T10:00:00.000Z") -> Path:
    """A Claude Code session of `cwd` in `claude_dir` (what `$CLAUDE_CONFIG_DIR` names): entries
    `u1` (the prompt, at `when`) and `a1` (the reply); returns its transcript."""
    from commandcode.interop.locations import claude_slug

    folder = claude_dir / "projects" / claude_slug(str(cwd))
    folder.mkdir(parents=True, exist_ok=True)
    base = {"sessionId": session_id, "cwd": str(cwd), "version": "2.1.0", "isSidechain": False, "userType": "external"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": when,
         "message": {"role": "user", "content": prompt}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": when,
         "message": {"role": "assistant", "model": "claude-x", "content": [{"type": "text", "text": reply}]}},
    ]
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def claude_backup_name(path: Path, version: int = 1) -> str:
    """The name Claude Code gives a file's backup: the sha256 of its real path (16 digits), `@v<n>`."""
    import hashlib

    return f"{hashlib.sha256(str(path).encode()).hexdigest()[:16]}@v{version}"


def write_claude_checkpointed_session(claude_dir: Path, cwd: Path, session_id: str, tracked: dict[str, Any], *,
                                      when: str = "2026-01-02T03:04:05.000Z") -> Path:
    """A Claude Code 2.1.332 session of `cwd` in `claude_dir`: the prompt "edit app" with a
    file-history snapshot naming `tracked` (tracking path -> backup name, or None for a file that
    did not exist), and the reply "edited it"; returns its transcript. The backups themselves are
    the caller's (`file-history/<session_id>/`)."""
    import uuid

    from commandcode.interop.locations import claude_slug

    folder = claude_dir / "projects" / claude_slug(str(cwd))
    folder.mkdir(parents=True, exist_ok=True)
    base = {"sessionId": session_id, "cwd": str(cwd), "version": "2.1.332", "isSidechain": False, "timestamp": when}
    prompt, reply = str(uuid.uuid4()), str(uuid.uuid4())
    backups = {path: {"backupFileName": name, "version": 1, "backupTime": when,
                      "realParentDir": str((cwd / path).parent)} for path, name in tracked.items()}
    lines = [
        {**base, "type": "user", "uuid": prompt, "parentUuid": None, "message": {"role": "user", "content": "edit app"}},
        {"type": "file-history-snapshot", "messageId": prompt, "isSnapshotUpdate": False,
         "snapshot": {"messageId": prompt, "timestamp": when, "trackedFileBackups": backups}},
        {**base, "type": "assistant", "uuid": reply, "parentUuid": prompt,
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-stub", "type": "message",
                     "content": [{"type": "text", "text": "edited it"}], "usage": {"input_tokens": 1, "output_tokens": 1}}},
    ]
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path
