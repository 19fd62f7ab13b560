"""One background worker: tasks run in order on a thread that is started once and then reused.

Owns `Worker`, used by shell tracking (`shell_tracking.py`: the baseline, the refresh at each
turn, storing what a command left) and the checkpoint manager's write after a `bash` call.
Starting a thread waits for the new thread to be scheduled, which on a loaded machine costs
milliseconds; handing a task to a running worker does not, so the work queued around a `bash`
call adds nothing to the turn. The thread is a daemon that exits when closed (`close`) or after
`IDLE_SECONDS` without work; owners wait for their own tasks (`submit` returns the task's done
event) before the process exits.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

IDLE_SECONDS = 10.0
"""A worker with nothing to do for this long ends its thread (an embedder that never closes a
session is not left with one thread per session); the next task starts another."""


class Worker:
    """A thread running submitted tasks one after the other (see the module docs)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: queue.SimpleQueue[tuple[Callable[[], None], threading.Event] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, task: Callable[[], None]) -> threading.Event:
        """Queues `task`; the returned event is set once it has run (whatever it raised)."""
        done = threading.Event()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._queue.put((task, done))
        return done

    def _run(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:  # submit queues under the lock: nothing can slip in between
                    if self._queue.empty():
                        if self._thread is threading.current_thread():
                            self._thread = None
                        return
                continue
            if item is None:
                return
            task, done = item
            try:
                task()
            except Exception:
                pass
            finally:
                done.set()

    @property
    def thread(self) -> threading.Thread | None:
        """The running thread, if any."""
        return self._thread

    def close(self) -> None:
        """Runs the queued tasks, then ends the thread and waits for it."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is not None and thread.is_alive():
                self._queue.put(None)
        if thread is not None and thread is not threading.current_thread():
            thread.join()
