"""Hand-built v3 transcripts for the export, share and copy tests: `TranscriptBuilder` chains
entries (each the child of the previous one unless `parent=` says otherwise) and writes the file
where the catalog finds it; `every_block_session` builds one with every block type, a compaction,
a branch, planted secrets and planted HTML."""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path
from typing import Any

from commandcode.config.paths import project_dir

# A 2x2 red PNG.
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a73000000164944415478da63f8cfc0f01f"
    "0418c0f8ff3f00003ffe07f9a6f6f8f60000000049454e44ae426082")).decode()
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS_KEY_ID = "AKIAIOSFODNN7EXAMPL3"
PLANTED_HTML = '<script>window.__planted = 1</script><img src=x onerror="window.__planted = 2">'


class TranscriptBuilder:
    """Entries of one session, chained; `write()` puts them in the data dir's project folder of `cwd`."""

    def __init__(self, cwd: Path, session_id: str | None = None) -> None:
        self.cwd = cwd
        self.session_id = session_id or str(uuid.uuid4())
        self.lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": self.session_id,
                                             "timestamp": "2026-01-02T03:04:05.000Z", "cwd": str(cwd)}]
        self.leaf: str | None = None
        self._clock = 0

    def add(self, entry_type: str, *, parent: str | bool | None = True, **fields: Any) -> str:
        self._clock += 1
        entry_id = f"{len(self.lines):08x}"
        parent_id = self.leaf if parent is True else (None if parent is False else parent)
        seconds, tenths = divmod(self._clock, 10)
        minutes, seconds = divmod(seconds, 60)
        stamp = f"2026-01-02T04:{minutes:02d}:{seconds:02d}.{tenths}00Z"
        self.lines.append({"type": entry_type, "id": entry_id, "parentId": parent_id, "timestamp": stamp, **fields})
        self.leaf = entry_id
        return entry_id

    def user(self, *blocks: dict[str, Any] | str, parent: str | bool | None = True, meta: dict[str, Any] | None = None) -> str:
        content = [{"type": "text", "text": block} if isinstance(block, str) else block for block in blocks]
        return self.add("message", parent=parent, message={"role": "user", "content": content,
                                                           "meta": meta or {"source": "user"}})

    def assistant(self, *blocks: dict[str, Any] | str, model: str = "local/test-model") -> str:
        content = [{"type": "text", "text": block} if isinstance(block, str) else block for block in blocks]
        return self.add("message", message={"role": "assistant", "content": content, "meta": {"source": "model"}},
                        model=model)

    def tool(self, call_id: str, name: str, arguments: dict[str, Any], output: str | list[dict[str, Any]]) -> None:
        self.assistant({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
        content = [{"type": "text", "text": output}] if isinstance(output, str) else output
        self.user({"type": "tool_result", "tool_use_id": call_id, "content": content}, meta={"source": "tool"})

    def text(self) -> str:
        return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in self.lines)

    def write(self, data: Path, extra: str = "") -> Path:
        del data  # the project folder comes from COMMANDCODE_HOME (the `home` fixture)
        folder = Path(project_dir(self.cwd))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.session_id}.jsonl"
        path.write_text(self.text() + extra, encoding="utf-8")
        return path


def one_turn_session(home: Path, cwd: Path, prompt: str = "a prompt", reply: str = "a reply") -> tuple[TranscriptBuilder, Path]:
    """A written session of one prompt and its reply in `cwd`'s project: the builder and the transcript."""
    builder = TranscriptBuilder(cwd)
    builder.user(prompt)
    builder.assistant(reply)
    return builder, builder.write(home)


def every_block_session(cwd: Path) -> TranscriptBuilder:
    """A session with text, images, thinking, tools (with and without results, hidden ones, an
    image result), a compaction, a branch summary, a meta message, an abandoned branch, planted
    HTML and secrets."""
    builder = TranscriptBuilder(cwd)
    builder.add("session_info", name="Every block")
    first = builder.user("First prompt: look at the image", {"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": PNG}})
    builder.assistant({"type": "thinking", "thinking": "Let me think.\n\nStep two.", "signature": ""},
                      "Here is **bold** and code:\n\n```python\ndef f(x):\n    return x * 2\n```\n")
    builder.tool("call_1", "read_file", {"file_path": str(cwd / "src" / "app.py")}, "1: print('hi')")
    builder.tool("call_2", "bash", {"command": "cat .env"}, f"GITHUB_TOKEN={GITHUB_TOKEN}\nAWS={AWS_KEY_ID}\n"
                 "MAX_TOKENS=4096\nsee /usr/lib/python3/os.py")
    builder.tool("call_3", "get_self_knowledge", {}, "hidden")
    builder.tool("call_4", "screenshot", {"url": "http://localhost:8080/"},
                 [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}])
    builder.assistant({"type": "tool_use", "id": "call_5", "name": "write_file",
                       "input": {"file_path": str(cwd / "out.txt"), "content": "x"}})
    builder.user("Second prompt with " + PLANTED_HTML)
    builder.assistant("Reply with planted " + PLANTED_HTML + " and `code ``` ticks`")
    builder.user("hidden meta", meta={"source": "cli", "isMeta": True})
    abandoned_parent = builder.leaf
    builder.user("Abandoned prompt on a branch")
    builder.assistant("Abandoned reply")
    builder.add("branch_summary", parent=abandoned_parent, fromId=builder.leaf, summary="We tried a branch.")
    builder.user("Third prompt after coming back")
    builder.assistant("Third reply")
    builder.add("compaction", summary="**Goal**: everything so far", firstKeptEntryId=builder.leaf, tokensBefore=1000)
    builder.user("Fourth prompt after the compaction")
    builder.assistant("Fourth reply, the last one")
    del first
    return builder
