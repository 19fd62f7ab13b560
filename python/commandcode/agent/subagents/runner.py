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

Every end is given to `on_end` (from the run's thread): the shell's notice of a finished
background run, `-p`'s report of the runs it waited for (`ended_line`). A run whose end the user
or the model was told of already is `told`: `agent_output` gave the model its result, the model
killed it, or the session's close (or a rewind) stopped it with its own line.
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
    show_output: bool = False  # its agent's `showOutput`: the final message is shown whole
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)
    end: RunEnd | None = None
    killed: bool = False  # `kill` or `stop_all` asked it to stop
    told: bool = False  # its end was reported already (see the module docstring)
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

    def outcome_words(self) -> str:
        """How it ended, in words: `completed`, `stopped at its turn limit`, `was stopped`,
        `failed: ERROR` (`running` before its end)."""
        end = self.end
        status = end.status if end is not None else "running"
        outcome = {"max_turns": "stopped at its turn limit", "killed": "was stopped"}.get(status, status)
        return f"{outcome}: {' '.join(end.error.split())[:200]}" if end is not None and end.error else outcome

    def ended_line(self) -> str:
        """The run's end in one line: its agent, id, outcome and task."""
        return f"sub-agent {self.agent_type} {self.agent_id} {self.outcome_words()} · {' '.join(self.description.split())}"

    def wait(self, cancel: threading.Event | None) -> bool:
        """Waits for the run to end; False when `cancel` was set first (the run goes on)."""
        while not self.done.wait(0.05):
            if cancel is not None and cancel.is_set():
                return False
        return True


class SubagentRunner:
    """The runs of one session (see the module docstring)."""

    def __init__(self, on_end: Callable[[Run], None] | None = None) -> None:
        self.on_end = on_end  # called with each run that ended, from its thread
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
        run = Run(request.agent_id, request.definition.name, request.description, request.background,
                  show_output=request.definition.show_output)
        run.thread = threading.Thread(target=self._main, args=(run, context, request), daemon=True,
                                      name=f"subagent-{request.agent_id}")
        with self._lock:
            self._runs[run.agent_id] = run
        run.thread.start()
        return run

    def _main(self, run: Run, context: RunContext, request: RunRequest) -> None:
        try:
            run.end = execute(context, request, run.cancel)
        except BaseException as error:  # a crash of the run's thread ends the run, never the session
            run.end = failure_end(f"the sub-agent crashed: {str(error) or type(error).__name__}", run.started)
        finally:
            run.done.set()
        listener = self.on_end
        if listener is not None:
            try:
                listener(run)
            except Exception:  # a notice that cannot be shown never ends the run's thread
                pass

    def get(self, agent_id: str) -> Run | None:
        with self._lock:
            return self._runs.get(agent_id)

    def background_runs(self) -> list[Run]:
        """The background runs (and foreground ones the parent stopped waiting for), oldest first."""
        with self._lock:
            return [run for run in self._runs.values() if run.background]

    def wait_background(self, on_end: Callable[[Run], None], on_wait: Callable[[list[Run]], None] | None = None,
                        poll: float = 0.05) -> list[Run]:
        """Waits for every background run still going (given to `on_wait` first, when there is
        one). Each background run whose end nobody was told of goes to `on_end` (on the calling
        thread) as it ends, or at once when it ended already, and is `told` from then on; returns
        those runs, in that order. Interruptible: a `KeyboardInterrupt` leaves the rest running
        (the session's close stops them)."""
        pending = [run for run in self.background_runs() if not run.told]
        going = [run for run in pending if not run.done.is_set()]
        if going and on_wait is not None:
            on_wait(going)
        reported: list[Run] = []
        while pending:
            for run in [run for run in pending if run.done.is_set()]:
                pending.remove(run)
                run.told = True
                reported.append(run)
                on_end(run)
            if pending:
                pending[0].done.wait(poll)
        return reported

    def running(self) -> list[Run]:
        with self._lock:
            return [run for run in self._runs.values() if not run.done.is_set()]

    def kill(self, run: Run) -> None:
        """Asks a run to stop (it ends `killed` once its model call or command has stopped);
        whoever asked says so, so its end is `told`."""
        run.killed = run.told = True
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
