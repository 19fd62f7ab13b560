"""Sub-agent runs for the tests (issue #28): `write_run` stores one run beside a session through
the real writer (sessions/subagent_writer.py), and `nested` / `directive` build prompts that make
the stub model (helpers/stub_models.py) drive an `agent` call whose sub-agent in turn calls tools:
the inner `[[tool ...]]` directive rides inside the outer call's JSON with its brackets escaped
(`\\u005b`), so the stub's pattern sees only the outer one, and the sub-agent receives the inner
one as its prompt. `AGENT_ID` in a `then` directive's input is replaced by the stub with the
`agent_id` the first round's result named (a background run's id)."""

from __future__ import annotations

import json
from typing import Any

from commandcode.sessions.files import SessionFiles
from commandcode.sessions.subagent_writer import SubagentTranscript
from helpers.stub_models import AGENT_ID_PLACEHOLDER as AGENT_ID

__all__ = ["AGENT_ID", "directive", "write_run"]


def directive(name: str, arguments: dict[str, Any], *, then: bool = False) -> str:
    """`[[tool NAME JSON]]` (`[[then tool ...]]`) with every bracket inside the JSON escaped."""
    escaped = json.dumps(arguments).replace("[", "\\u005b").replace("]", "\\u005d")
    return f"[[{'then ' if then else ''}tool {name} {escaped}]]"


def write_run(parent: SessionFiles, cwd: str, *, tool_use_id: str | None, prompt: str = "do it",
              reply: str = "done", agent_type: str = "general", status: str | None = "completed",
              background: bool = False) -> SubagentTranscript:
    """One finished run (prompt, reply) beside `parent`, launched by the call `tool_use_id`
    (`status` None: left `running`, as a killed process leaves it)."""
    with SubagentTranscript(parent, cwd, agent_type=agent_type, description=f"{agent_type} run",
                            tool_use_id=tool_use_id, background=background, model="offline") as run:
        run.writer.append_message({"role": "user", "content": [{"type": "text", "text": prompt}]})
        run.writer.append_message({"role": "assistant", "content": [{"type": "text", "text": reply}]},
                                  model="offline", usage={"inputTokens": 3, "outputTokens": 2})
        run.writer.commit()
        if status is not None:
            run.finish(status)
    return run
