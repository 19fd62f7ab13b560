"""Branched sessions for the fork, clone, goto, label and tree-navigator tests, written through the
real writer: `branched_session(cwd)` and the message builders it uses.

The session it writes (ids in the returned dict):

    u1 "first prompt" ── a1 "first answer"
        ├── u2 "second prompt on branch A" ── a2 read_file(notes.txt) ── r2 (tool_result) ── a3 "A done"
        └── u3 "third prompt on branch B" ── a4 write_file(b.txt) ── r4 (tool_result) ── a5 "B done"   ← leaf

(branch B is written last, so it is the active path).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from commandcode.sessions.files import SessionFiles
from commandcode.sessions.writer import SessionWriter
from helpers.checkpoints import new_session_files


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def tool_call(call_id: str, name: str, path: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name,
                                              "input": {"file_path": path, "content": "x"}}]}


def tool_result(call_id: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}]}


def branched_session(cwd: Path, files: SessionFiles | None = None) -> tuple[SessionFiles, dict[str, str]]:
    """Writes the two-branch session above in `cwd`'s project; returns its files and entry ids."""
    files = files or new_session_files(cwd)
    ids: dict[str, str] = {}
    with SessionWriter(files, str(cwd)) as writer:
        ids["u1"] = writer.append_message(user("first prompt"))
        ids["a1"] = writer.append_message(assistant("first answer"), model="offline", usage={"outputTokens": 7})
        ids["u2"] = writer.append_message(user("second prompt on branch A"))
        ids["a2"] = writer.append_message(tool_call("t2", "read_file", str(cwd / "notes.txt")))
        ids["r2"] = writer.append_message(tool_result("t2"))
        ids["a3"] = writer.append_message(assistant("A done"))
        writer.commit()
        writer.leaf_id = ids["a1"]
        ids["u3"] = writer.append_message(user("third prompt on branch B"))
        ids["a4"] = writer.append_message(tool_call("t4", "write_file", str(cwd / "b.txt")))
        ids["r4"] = writer.append_message(tool_result("t4"))
        ids["a5"] = writer.append_message(assistant("B done"))
        writer.commit()
    return files, ids
