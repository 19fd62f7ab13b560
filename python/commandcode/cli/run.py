"""`commandcode -p PROMPT`: one headless turn in the current directory, written as a real session.

A thin caller of `agent.runtime.AgentSession`: it checks the options, decodes argv text as Node
does, runs the turn and prints the reply.
"""

from __future__ import annotations

from pathlib import Path

from ..agent.runtime import AgentSession, resolve_model
from ..config.paths import node_text
from ..errors import CommandcodeError, UsageError
from .output import print_json, printable, stdout, warn


def from_argv(text: str) -> str:
    """Command-line text as Node reads it: bytes that are not UTF-8 become U+FFFD (Python keeps
    them as lone surrogates, which would reach the transcript as `\\udcXX` escapes)."""
    return node_text(text)


def run_print(prompt: str, *, output_format: str, name: str | None, resume: str | None, continue_last: bool,
              no_session: bool, model_name: str) -> None:
    """Runs one headless turn and prints the reply."""
    if output_format not in ("text", "json"):
        raise UsageError(f"unknown output format {output_format!r}", hint="use text or json")
    if resume and continue_last:
        raise UsageError("-r and -c cannot be used together")
    prompt = from_argv(prompt)
    name = from_argv(name) if name else name
    if not prompt.strip():
        raise UsageError("the prompt is empty", hint='pass the prompt text: commandcode -p "PROMPT"')
    model = resolve_model(model_name)
    agent = AgentSession.start(Path.cwd(), reference=resume, continue_last=continue_last, persist=not no_session,
                               model=model, entrypoint="print", notify=warn)
    if no_session:
        warn("--no-session: this turn's edits are not checkpointed; no rewind can undo them")
    with agent:
        if name and name.strip():
            agent.rename(name)
        result = agent.run_turn(prompt)
    for notice in result.notices:
        warn(notice)
    if output_format == "json":
        payload: dict[str, object] = {"type": "result", "session_id": None if no_session else agent.session_id,
                   "result": result.text, "is_error": result.error is not None, "error": result.error,
                   "tool_calls": result.tool_calls, "model": model.model_id}
        if result.notices:  # e.g. checkpoints the 200-backup cap dropped
            payload["notices"] = result.notices
        print_json(payload)
    elif result.text:
        stdout.out(printable(result.text), highlight=False)  # tool output and file names: no raw control bytes
    if result.error is not None:  # recorded in the session (`Error: …`), and a failed run for the caller
        raise CommandcodeError(f"the turn failed: {result.error}",
                               hint=None if no_session else f"the turn and its error are saved in session {agent.session_id}")
