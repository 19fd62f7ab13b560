"""A Claude Code compaction converts to one `compaction` entry holding its summary (issue 32 §4):
also when attachments sit between the boundary and the summary (Claude Code 2.1.332's reactive
compaction writes them there), and never twice (the boundary that starts the active path was
written once off the path and once as its root)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commandcode.interop.claude_code import open_claude
from commandcode.interop.convert import convert

SID = "0b5e5e1e-0000-4000-8000-000000000001"


def _entry(kind: str, uuid: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SID, "cwd": "/tmp/proj",
            "version": "2.1.332", "isSidechain": False, "timestamp": "2026-01-02T03:04:05.000Z", **fields}


def _user(uuid: str, parent: str | None, text: str, **fields: Any) -> dict[str, Any]:
    return _entry("user", uuid, parent, message={"role": "user", "content": text}, **fields)


def _assistant(uuid: str, parent: str, text: str) -> dict[str, Any]:
    return _entry("assistant", uuid, parent, message={"id": f"msg-{uuid}", "role": "assistant", "model": "claude-x",
                                                       "content": [{"type": "text", "text": text}]})


def _write(tmp_path: Path, attachments: int) -> Path:
    lines = [_user("u1", None, "before the compaction"), _assistant("a1", "u1", "reply one"),
             _entry("system", "b1", None, subtype="compact_boundary", logicalParentUuid="a1",
                    compactMetadata={"trigger": "auto", "preTokens": 1234})]
    parent = "b1"
    for number in range(attachments):
        lines.append(_entry("attachment", f"t{number}", parent, attachment={"type": "file", "filename": "x.py"}))
        parent = f"t{number}"
    lines += [_user("s1", parent, "THE SUMMARY of the earlier turns", isCompactSummary=True),
              _user("u2", "s1", "after the compaction"), _assistant("a2", "u2", "reply two")]
    path = tmp_path / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize("attachments", [0, 1, 3])
def test_one_compaction_with_its_summary(tmp_path: Path, attachments: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    converted = convert(open_claude(_write(tmp_path, attachments)))
    compactions = [entry for entry in converted.entries if entry["type"] == "compaction"]
    assert len(compactions) == 1, compactions
    assert compactions[0]["summary"] == "THE SUMMARY of the earlier turns"
    assert compactions[0]["tokensBefore"] == 1234
    messages = [entry for entry in converted.entries if entry["type"] == "message"]
    assert [message["parentId"] for message in messages if message["message"]["role"] == "user"
            and message["message"]["content"][0]["text"] == "after the compaction"] == [compactions[0]["id"]]
    ids = [entry["id"] for entry in converted.entries]
    assert len(ids) == len(set(ids))
