"""Claude Code subagents imported as our own sub-agent runs (`commandcode import claude`,
format §19 and §21): `write_imported_runs(session, files)`.

Claude Code keeps each subagent in `<id>/subagents/agent-<agent id>.jsonl` with its
`.meta.json` (read by `claude_code.py`, mapped to a `SubagentRun` by `claude_subagents.py`). The
import writes each one beside the imported session in our run layout
(`<imported id>/subagents/agent-<agent id>.jsonl`: its conversation converted as the parent's is,
a v3 transcript whose header `id` is `agent-<agent id>`; and `agent-<agent id>.meta.json`: the
keys our runs have, `status` `completed` when Claude Code marked it finished, else
`interrupted`, plus `importedFrom`), linked to the parent's `Agent`/`Task` call by `toolUseId`
(the call keeps Claude Code's id on import). So fork and clone copy them, `sessions show`, the
exports and `/tree` fold them under the call, and the picker never lists them, as our own runs.

Every file is written atomically, each run's transcript before its meta, and the importer writes
them before the parent's transcript: a kill leaves no session (the next import writes them
again over what is there) or a session with all its runs. A subagent whose file could not be
read (the reader warned already), whose id our runs cannot carry, or that holds no message is
left out with a warning line.
"""

from __future__ import annotations

from ..sessions.files import SessionFiles
from ..sessions.subagent_runs import AGENT_ID, run_files, subagents_dir
from ..storage.durable import atomic_write, ensure_dir
from ..storage.jsonfmt import dumps_pretty
from .claude_code import ClaudeSession
from .claude_subagents import claude_run
from .convert import convert
from .materialize import session_lines


def write_imported_runs(session: ClaudeSession, files: SessionFiles, warnings: list[str]) -> int:
    """Writes the subagents of `session` as runs of the imported session `files`; returns how
    many (the ones left out are lines in `warnings`).

    Raises:
        OSError: a file could not be written.
    """
    written = 0
    for subagent in session.subagents:
        if subagent.session is None:
            continue  # unreadable: the reader's warning says so
        if not AGENT_ID.fullmatch(subagent.agent_id):
            warnings.append(f"subagent {subagent.agent_id[:80]!r}: not an id a sub-agent run can have; left out")
            continue
        converted = convert(subagent.session)
        if not converted.entries:
            warnings.append(f"subagent {subagent.agent_id}: no message to import; left out")
            continue
        run = claude_run(subagent)
        meta = run.to_meta()
        meta["status"] = run.status or "interrupted"  # never finished in Claude Code: it will not here
        meta["model"] = converted.model or run.model
        meta["importedFrom"] = {"tool": "claude", "path": str(subagent.path), "agentId": subagent.agent_id}
        own = run_files(files, subagent.agent_id)
        if not written:
            ensure_dir(subagents_dir(files))
        atomic_write(own.transcript, session_lines(own.session_id, subagent.session, converted))
        atomic_write(own.meta, dumps_pretty({key: value for key, value in meta.items() if value is not None})
                     .encode("utf-8"))
        written += 1
    return written
