"""Summaries of a run of messages, for rewinds (and compaction, later): the `Summarizer` shape
and the built-in offline one.

A rewind that summarizes takes a `Summarizer` from its caller, so a real provider can write
the summary instead of this deterministic one; `offline_summary` is what the offline model uses.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..sessions.context import content_blocks


class Summarizer(Protocol):
    """Writes the summary text of `messages` (context messages, oldest first)."""

    def __call__(self, messages: list[dict[str, Any]], /) -> str: ...


def first_line(text: str) -> str:
    """The first non-blank line of `text`, stripped; `(no output)` when there is none."""
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else "(no output)"


def offline_summary(messages: list[dict[str, Any]]) -> str:
    """A deterministic structured summary of a run of messages (compaction, rewind summaries)."""
    prompts: list[str] = []
    tools: dict[str, int] = {}
    files: list[str] = []
    for message in messages:
        for block in content_blocks(message.get("content")):
            if message.get("role") == "user" and block.get("type") == "text" and not (message.get("meta") or {}).get("isSummary"):
                prompts.append(first_line(str(block.get("text", ""))))
            if block.get("type") == "tool_use":
                name = str(block.get("name"))
                tools[name] = tools.get(name, 0) + 1
                raw_input = block.get("input")
                tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
                path = tool_input.get("file_path") or tool_input.get("path")
                if name in ("write_file", "edit_file") and isinstance(path, str) and path not in files:
                    files.append(path)
    parts = ["**Goal**", prompts[0] if prompts else "(no user prompt)", "", "**Requests**"]
    parts += [f"- {prompt}" for prompt in prompts[:20]] or ["- (none)"]
    parts += ["", "**Tools used**"]
    parts += [f"- {name} × {count}" for name, count in sorted(tools.items())] or ["- (none)"]
    parts += ["", "**Modified files**"]
    parts += [f"- {path}" for path in files] or ["- (none)"]
    parts += ["", f"**Messages summarized**: {len(messages)}"]
    return "\n".join(parts)
