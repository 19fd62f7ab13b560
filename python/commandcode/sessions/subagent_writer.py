"""Writing one sub-agent run beside its parent session (format §21): `SubagentTranscript`.

    with SubagentTranscript(parent_files, cwd, agent_type="general", description="Write b",
                            tool_use_id=call_id) as run:
        run.writer.append_message(prompt); run.writer.append_message(reply, usage=..., model=...)
        run.writer.commit()                       # per turn of the sub-agent, as the parent commits
        run.finish("completed")

Order, so a kill at any moment leaves something every reader takes for what it is: the folder
(0700), then the meta (`status: "running"`, written atomically, never over an existing run),
then the transcript through the one `SessionWriter` (its rules: nothing on disk before the first
assistant message, a commit per turn, fsynced, cut back on failure, one writer per file), then
the meta again at `finish` (`status`, `finishedAt`). A run killed with its process keeps
`running` in its meta, and readers report it `interrupted` (no writer holds its lock).

`persist=False` (a parent session that is not saved) writes nothing: the run's writer keeps its
conversation in memory only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import uuid
from typing import Any

from ..storage.durable import atomic_write, ensure_dir
from ..storage.ids import iso_now
from ..storage.jsonfmt import dumps_pretty
from .files import SessionFiles
from .subagent_runs import STATUSES, run_files, run_ids, subagents_dir
from .writer import SessionWriter

_issued: dict[str, int] = {}  # the last `n` given out per session in this process
_issued_lock = threading.Lock()


def new_agent_id(parent: SessionFiles, *, background: bool) -> str:
    """A fresh run id shaped as the real CLI's background ids (`bg-<n>-<8 hex>`; foreground runs,
    which it never names, get `fg-<n>-<8 hex>`): `n` counts the session's runs (those stored,
    and those started here but not yet on disk); the hex keeps ids apart whatever `n` is."""
    key = subagents_dir(parent)
    with _issued_lock:
        number = max(len(run_ids(parent)), _issued.get(key, 0)) + 1
        _issued[key] = number
    return f"{'bg' if background else 'fg'}-{number}-{uuid.uuid4().hex[:8]}"


class SubagentTranscript:
    """One run being written (see the module docstring); a context manager."""

    def __init__(self, parent: SessionFiles, cwd: str, *, agent_type: str, description: str,
                 tool_use_id: str | None, agent_id: str | None = None, background: bool = False,
                 model: str | None = None, persist: bool = True) -> None:
        self.parent = parent
        self.persist = persist
        self.agent_id = agent_id or new_agent_id(parent, background=background)
        self.files = run_files(parent, self.agent_id)
        self.meta: dict[str, Any] = {"agentId": self.agent_id, "agentType": agent_type, "description": description,
                                     "toolUseId": tool_use_id, "background": background, "model": model,
                                     "status": "running", "startedAt": iso_now()}
        self.writer = SessionWriter(self.files, cwd, persist=persist)
        self.finished = False

    def __enter__(self) -> SubagentTranscript:
        if not self.persist:
            self.writer.__enter__()
            return self
        ensure_dir(subagents_dir(self.parent))
        if os.path.lexists(self.files.meta) or os.path.lexists(self.files.transcript):
            raise FileExistsError(errno.EEXIST, "a sub-agent run with this id exists", str(self.files.transcript))
        self._write_meta()
        self.writer.__enter__()
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        try:
            if not self.finished and exc_type is not None:
                with contextlib.suppress(OSError):  # the original failure is the one to report
                    self.finish("failed", error=str(rest[0]) if rest and rest[0] is not None else None)
        finally:
            self.writer.close()

    def _write_meta(self) -> None:
        if not self.persist:
            return
        atomic_write(self.files.meta, dumps_pretty({key: value for key, value in self.meta.items()
                                                    if value is not None}).encode("utf-8"))

    def finish(self, status: str, *, error: str | None = None) -> None:
        """Commits what is pending (a run that ended before any reply is still recorded) and
        records how it ended (`completed`, `failed`, `killed`, `max_turns`, `interrupted`)."""
        if status not in STATUSES or status == "running":
            raise ValueError(f"not a final status: {status!r}")
        self.writer.commit(force=True)
        self.meta.update(status=status, finishedAt=iso_now())
        if error:
            self.meta["error"] = error
        self._write_meta()
        self.finished = True
