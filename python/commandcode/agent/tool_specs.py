"""The tools as a model is told about them: name, description and JSON Schema of the input, with
the real CLI's input names (`file_path`, `content`, `old_string`, `new_string`, `replace_all`,
`command`, `timeout`). Providers send these with each request."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

TOOL_SPECS: list[dict[str, Any]] = [
    {"name": "read_file", "description": "Read a text file. Lines come back numbered; long files are cut at a bound that the result states.",
     "input_schema": {"type": "object", "properties": {
         "file_path": {"type": "string", "description": "Path of the file, absolute or relative to the working directory"}},
         "required": ["file_path"]}},
    {"name": "write_file", "description": "Create a file or replace its whole content.",
     "input_schema": {"type": "object", "properties": {
         "file_path": {"type": "string", "description": "Path of the file"},
         "content": {"type": "string", "description": "The complete new content"}},
         "required": ["file_path", "content"]}},
    {"name": "edit_file", "description": "Replace an exact string in a file (once, unless replace_all).",
     "input_schema": {"type": "object", "properties": {
         "file_path": {"type": "string", "description": "Path of the file"},
         "old_string": {"type": "string", "description": "The exact text to replace; it must occur once unless replace_all"},
         "new_string": {"type": "string", "description": "The replacement text"},
         "replace_all": {"type": "boolean", "description": "Replace every occurrence"}},
         "required": ["file_path", "old_string", "new_string"]}},
    {"name": "bash", "description": "Run a shell command in the working directory. Output is capped at 30,000 characters (the result says when); the default timeout is 120 s.",
     "input_schema": {"type": "object", "properties": {
         "command": {"type": "string", "description": "The command line (run with /bin/sh -c)"},
         "timeout": {"type": "number", "description": "Timeout in milliseconds (at most 600000)"}},
         "required": ["command"]}},
]

TOOL_NAMES = [spec["name"] for spec in TOOL_SPECS]
SPAWN_TOOL_NAMES = ("agent", "agent_output")  # a session's turns offer these too (agent/agent_tool_specs.py)


def openai_tools(specs: Sequence[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """`specs` (default: `TOOL_SPECS`) in the chat-completions `tools` shape."""
    return [{"type": "function", "function": {"name": spec["name"], "description": spec["description"],
                                              "parameters": spec["input_schema"]}}
            for spec in (TOOL_SPECS if specs is None else specs)]
