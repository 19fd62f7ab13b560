"""Offline-model scripts for sub-agent runs (issue #28): `call`, `agent_call` and `run_results`.

The offline model runs the `call TOOL {JSON}` lines of a prompt (`also call` joins the step
before: parallel calls), and a sub-agent's prompt is scripted the same way, so an `agent` call
whose `prompt` holds `call` lines is a deterministic sub-agent run. `{{agent_id}}` in an input is
the newest `agent_id: …` of the turn's earlier results (a background run's id).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from commandcode.sessions.files import SessionFiles
from commandcode.sessions.reader import open_session
from commandcode.sessions.subagent_runs import list_subagent_runs, read_run_meta, run_files


def call(name: str, *, also: bool = False, **tool_input: Any) -> str:
    """One `call NAME {JSON}` line (`also call …` with `also`)."""
    return f"{'also ' if also else ''}call {name} {json.dumps(tool_input)}"


def agent_call(*lines: str, also: bool = False, description: str = "task", **fields: Any) -> str:
    """An `agent` call whose sub-agent prompt is `lines` (each a `call` line, or text)."""
    return call("agent", also=also, description=description, prompt="\n".join(lines), **fields)


def tool_results(transcript: Path | str) -> list[str]:
    """The text of every tool result of a transcript's context, in order."""
    session = open_session(str(transcript), use_index=False)
    texts = []
    for message in session.context().messages:
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                texts.append("".join(str(part.get("text", "")) for part in block.get("content") or []))
    return texts


def run_metas(files: SessionFiles) -> dict[str, dict[str, Any]]:
    """The meta of every run stored beside a session, by agent id."""
    return {run.agent_id: read_run_meta(str(run_files(files, run.agent_id).meta))
            for run in list_subagent_runs(files).runs}


def dangling_calls(transcript: Path | str) -> list[str]:
    """The ids of `tool_use` blocks with no `tool_result` in the context (a half-written step)."""
    session = open_session(str(transcript), use_index=False)
    calls, results = [], set()
    for message in session.context().messages:
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                calls.append(str(block.get("id")))
            elif isinstance(block, dict) and block.get("type") == "tool_result":
                results.add(str(block.get("tool_use_id")))
    return [call_id for call_id in calls if call_id not in results]
