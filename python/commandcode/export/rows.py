"""From selected messages to display rows: the one walk every format renders.

Rows are what a reader sees: a user turn (text and images), assistant prose, thinking, a tool
call with its output (matched to its `tool_use` by id, as the real CLI does, from the tool-result
message that follows, with the sub-agent runs it started folded under it), a summary (compaction
or branch summary), and branch markers. Tool-result
messages are not rows of their own. The tools `get_command_code_knowledge` and
`get_self_knowledge` are hidden, as the real CLI hides them.

Every text goes through the `Scrubber` (secrets redacted, then paths sanitized) before it becomes
a row, so no renderer can forget it. `Walk.messages` counts the messages shown (the header's
"Messages"); the assistant message is held until the next message arrives, so memory stays at one
turn however long the session is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..sessions.context import BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_PREFIX, content_blocks
from ..sessions.subagent_runs import SubagentRun
from .redact import Redactor
from .sanitize import PathSanitizer
from .select import BranchClose, BranchOpen, Item

HIDDEN_TOOLS = frozenset({"get_command_code_knowledge", "get_self_knowledge"})
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_ARG_KEYS = ("file_path", "path", "command", "pattern", "query", "url", "description", "prompt")
_PATH_KEYS = frozenset({"file_path", "path"})


class Scrubber:
    """Secrets out, then paths sanitized; `redactor=None` keeps secrets (a `--no-redact` jsonl)."""

    def __init__(self, redactor: Redactor | None, paths: PathSanitizer | None) -> None:
        self.redactor = redactor
        self.paths = paths

    def __call__(self, text: str) -> str:
        if self.redactor is not None:
            text = self.redactor.redact(text)
        if self.paths is not None:
            text = self.paths.text(text)
        return text

    def path_argument(self, path: str) -> str:
        if self.redactor is not None:
            path = self.redactor.redact(path)
        return self.paths.relative(path) if self.paths is not None else path


class Image:
    __slots__ = ("data", "media_type")

    def __init__(self, media_type: str, data: str) -> None:
        self.media_type, self.data = media_type, data


class UserRow:
    __slots__ = ("images", "text")

    def __init__(self, text: str, images: list[Image]) -> None:
        self.text, self.images = text, images


class TextRow:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class ThinkingRow:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class ToolRow:
    """One tool call; `output` is None when no result was captured; `subagents`: the sub-agent
    runs this call started (an `agent` call), folded under it."""

    __slots__ = ("argument", "badge", "images", "name", "output", "subagents")

    def __init__(self, name: str, badge: str, argument: str, output: str | None, images: list[Image],
                 subagents: list[SubagentBlock] | None = None) -> None:
        self.name, self.badge, self.argument, self.output, self.images = name, badge, argument, output, images
        self.subagents = subagents or []


class SubagentBlock:
    """One sub-agent run under its call: the agent, its description and status (scrubbed), and
    the rows of its own conversation (`messages` of them)."""

    __slots__ = ("agent", "description", "messages", "rows", "status")

    def __init__(self, agent: str, description: str, status: str, rows: list[Row], messages: int) -> None:
        self.agent, self.description, self.status, self.rows, self.messages = agent, description, status, rows, messages


class SummaryRow:
    __slots__ = ("text", "title")

    def __init__(self, title: str, text: str) -> None:
        self.title, self.text = title, text


Row = UserRow | TextRow | ThinkingRow | ToolRow | SummaryRow | BranchOpen | BranchClose


def badge(name: str) -> str:
    """The tool's badge: `read_file` → READ, `bash` → BASH, `web_fetch` → WEB FETCH."""
    stem = name[: -len("_file")] if name.endswith("_file") else name
    return stem.replace("_", " ").replace("-", " ").upper().strip() or "TOOL"


def _image(block: dict[str, Any]) -> Image | None:
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    media_type, data = source.get("media_type"), source.get("data")
    if media_type not in IMAGE_TYPES or not isinstance(data, str) or not _BASE64.fullmatch(data):
        return None  # only data the page can show safely
    return Image(str(media_type), data)


class Walk:
    """Turns selected items into rows (see the module docstring); `runs`: the session's sub-agent
    runs by the id of the call that started them (`SubagentRuns.by_tool_use()`), each folded
    under its call as a `SubagentBlock` whose texts go through the same scrubber."""

    def __init__(self, scrub: Scrubber, runs: Mapping[str, Sequence[SubagentRun]] | None = None) -> None:
        self.scrub = scrub
        self.runs = runs or {}
        self.messages = 0

    def rows(self, items: Iterable[Item]) -> Iterator[Row]:
        pending: dict[str, Any] | None = None
        results: dict[str, dict[str, Any]] = {}
        for item in items:
            if not isinstance(item, dict):
                if pending is not None:
                    yield from self._assistant(pending, results)
                    pending, results = None, {}
                yield item
                continue
            self.messages += 1
            blocks = content_blocks(item.get("content"))
            if item.get("role") == "assistant":
                if pending is not None:
                    yield from self._assistant(pending, results)
                pending, results = item, {}
                continue
            own = []
            for block in blocks:
                if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                    results[block["tool_use_id"]] = block
                else:
                    own.append(block)
            if not own:
                continue  # a tool-result message: its results belong to the pending call
            if pending is not None:
                yield from self._assistant(pending, results)
                pending, results = None, {}
            yield self._user(item, own)
        if pending is not None:
            yield from self._assistant(pending, results)

    def _user(self, message: dict[str, Any], blocks: list[dict[str, Any]]) -> Row:
        texts = [str(block.get("text", "")) for block in blocks if block.get("type") == "text"]
        text = "\n".join(texts)
        meta = message.get("meta")
        if isinstance(meta, dict) and meta.get("isSummary"):
            if text.startswith(COMPACTION_PREFIX):
                return SummaryRow("Compacted summary of the earlier conversation", self.scrub(text[len(COMPACTION_PREFIX):]))
            if text.startswith(BRANCH_SUMMARY_PREFIX):
                inner = text[len(BRANCH_SUMMARY_PREFIX):]
                inner = inner[: -len(BRANCH_SUMMARY_SUFFIX)] if inner.endswith(BRANCH_SUMMARY_SUFFIX) else inner
                return SummaryRow("Summary of a branch this conversation came back from", self.scrub(inner))
        images = [image for block in blocks if block.get("type") == "image" and (image := _image(block)) is not None]
        return UserRow(self.scrub(text), images)

    def _assistant(self, message: dict[str, Any], results: dict[str, dict[str, Any]]) -> Iterator[Row]:
        for block in content_blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text":
                text = str(block.get("text", ""))
                if text.strip():
                    yield TextRow(self.scrub(text))
            elif kind == "thinking":
                text = str(block.get("thinking", ""))
                if text.strip():
                    yield ThinkingRow(self.scrub(text))
            elif kind == "tool_use":
                name = str(block.get("name", "tool"))
                if name in HIDDEN_TOOLS:
                    continue
                row = self._tool(name, block.get("input"), results.get(str(block.get("id"))))
                row.subagents = [self._subagent(run) for run in self.runs.get(str(block.get("id")), ())]
                yield row

    def _subagent(self, run: SubagentRun) -> SubagentBlock:
        inner = Walk(self.scrub)  # a run starts no runs of its own (one level deep)
        rows = list(inner.rows(run.messages))
        return SubagentBlock(self.scrub(run.agent_type or "agent"), self.scrub(run.description or ""),
                             run.status or "unknown", rows, inner.messages)

    def _tool(self, name: str, arguments: Any, result: dict[str, Any] | None) -> ToolRow:
        argument = ""
        if isinstance(arguments, dict):
            for key in _ARG_KEYS:
                value = arguments.get(key)
                if isinstance(value, str) and value.strip():
                    argument = self.scrub.path_argument(value) if key in _PATH_KEYS else self.scrub(value)
                    break
        argument = " ".join(argument.split())
        if len(argument) > 200:
            argument = argument[:199] + "…"
        output: str | None = None
        images: list[Image] = []
        if result is not None:
            texts = []
            for block in content_blocks(result.get("content")):
                if block.get("type") == "text":
                    texts.append(str(block.get("text", "")))
                elif block.get("type") == "image" and (image := _image(block)) is not None:
                    images.append(image)
            output = self.scrub("\n".join(texts))
        return ToolRow(name, badge(name), argument, output, images)
