"""The sub-agent runs of one session and their lifetime: `SubagentRunner`.

Each run goes on in a thread of its own (`run.execute`), so several run at once (two `agent`
calls of one model step, background runs while the parent's turn goes on). The runner keeps
every run this session started: `agent_output` finds a background run by id; a foreground run
the user stopped waiting for (Esc) becomes a background one (it goes on; Esc stops the wait,
not the run, as in the real CLI). A run is stopped by setting its `cancel` (`kill`, and
`stop_all` when the session closes: the shell's exit, the end of a `-p` run): its model call
or command stops, its transcript is committed as far as it got and its meta says `killed`.

A thread that dies of something `execute` did not expect (a bug of ours) still ends the run: it
is `failed` with that error, the parent's call gets the error result, and the transcript keeps
only what was committed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..agents.results import BackgroundRecord
from .run import RunContext, RunEnd, RunRequest, execute, failure_end

STOP_JOIN_SECONDS = 10.0  # how long `stop_all` waits for each stopped run to write its end


@dataclass
class Run:
    """One run this session started; `end` is set (then `done`) when it finishes."""

    agent_id: str
    agent_type: str
    description: str
    background: bool
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)
    end: RunEnd | None = None
    killed: bool = False  # `kill` or `stop_all` asked it to stop
    thread: threading.Thread | None = None

    @property
    def status(self) -> str:
        """`running`, `completed`, `killed` or `failed` (`max_turns` reads as completed: it has
        an outcome, noted)."""
        if self.end is None:
            return "running"
        return {"max_turns": "completed"}.get(self.end.status, self.end.status)

    def record(self) -> BackgroundRecord:
        """The run as `agent_output` describes it."""
        end = self.end
        return BackgroundRecord(
            agent_id=self.agent_id, subagent_type=self.agent_type, description=self.description, status=self.status,
            running_ms=int((time.monotonic() - self.started) * 1000),
            outcome=end.outcome if end is not None and end.status != "failed" else None,
            error=end.error if end is not None else None)

    def wait(self, cancel: threading.Event | None) -> bool:
        """Waits for the run to end; False when `cancel` was set first (the run goes on)."""
        while not self.done.wait(0.05):
            if cancel is not None and cancel.is_set():
                return False
        return True


class SubagentRunner:
    """The runs of one session (see the module docstring)."""

    def __init__(self) -> None:
        self._runs: dict[str, Run] = {}
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def warn_once(self, line: str, notify: Callable[[str], None]) -> None:
        """Gives `line` (an agent file's warning) to `notify` the first time only."""
        if line not in self._warned:
            self._warned.add(line)
            notify(line)

    def start(self, context: RunContext, request: RunRequest) -> Run:
        """Starts `request` in a thread of its own; returns its `Run` at once."""
        run = Run(request.agent_id, request.definition.name, request.description, request.background)
        run.thread = threading.Thread(target=self._main, args=(run, context, request), daemon=True,
                                      name=f"subagent-{request.agent_id}")
        with self._lock:
            self._runs[run.agent_id] = run
        run.thread.start()
        return run

    @staticmethod
    def _main(run: Run, context: RunContext, request: RunRequest) -> None:
        try:
            run.end = execute(context, request, run.cancel)
        except BaseException as error:  # a crash of the run's thread ends the run, never the session
            run.end = failure_end(f"the sub-agent crashed: {str(error) or type(error).__name__}", run.started)
        finally:
            run.done.set()

    def get(self, agent_id: str) -> Run | None:
        with self._lock:
            return self._runs.get(agent_id)

    def background_runs(self) -> list[Run]:
        """The background runs (and foreground ones the parent stopped waiting for), oldest first."""
        with self._lock:
            return [run for run in self._runs.values() if run.background]

    def running(self) -> list[Run]:
        with self._lock:
            return [run for run in self._runs.values() if not run.done.is_set()]

    def kill(self, run: Run) -> None:
        """Asks a run to stop (it ends `killed` once its model call or command has stopped)."""
        run.killed = True
        run.cancel.set()

    def stop_all(self) -> list[str]:
        """Stops every run still going and waits (bounded) for each to write its end; returns
        the ids of those it stopped."""
        stopped = self.running()
        for run in stopped:
            self.kill(run)
        deadline = time.monotonic() + STOP_JOIN_SECONDS
        for run in stopped:
            if run.thread is not None:
                run.thread.join(max(0.0, deadline - time.monotonic()))
        return [run.agent_id for run in stopped]
