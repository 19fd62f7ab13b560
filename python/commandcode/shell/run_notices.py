"""Telling the user at the prompt that a background sub-agent run ended: `RunNotices`.

A run's end comes from its own thread (`SessionTurns.on_subagent_end`). The line (its agent,
id, outcome and task: `Run.ended_line`) is printed by the main thread: at once when no turn runs
(the prompt returns for it, keeping what was typed), else when the turn ends. It is never printed
for a run whose end the model already has (`agent_output`) or that the user stopped (`/exit`,
a rewind, `agent_output` kill): those are `told`. A run whose agent says `showOutput: true`
has its final message shown whole under its line. The real CLI feeds nothing of it to the model
(its `subagent_stop` event goes to telemetry only), and neither do we: the model asks
`agent_output` for a result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..agent.subagents.runner import Run


class RunNotices:
    """The ended background runs not told yet. `wake` makes the prompt return (from any thread),
    `busy` says whether a turn runs, `notice` prints a line and `show` markdown (main thread)."""

    def __init__(self, wake: Callable[[], None], busy: Callable[[], bool], notice: Callable[[str], None],
                 show: Callable[[str], None]) -> None:
        self._wake, self._busy, self._notice, self._show = wake, busy, notice, show
        self._ended: list[Run] = []
        self._lock = threading.Lock()

    def ended(self, run: Run) -> None:
        """From the run's thread: a background run's end is kept to be told."""
        if not run.background or run.told:
            return
        with self._lock:
            self._ended.append(run)
        if not self._busy():
            self._wake()

    def pending(self) -> bool:
        """Whether a line waits to be told (the prompt returns for it when no turn runs)."""
        with self._lock:
            return bool(self._ended) and not self._busy()

    def tell(self) -> None:
        """On the main thread: one line per ended run nobody was told of yet, oldest first."""
        with self._lock:
            ended, self._ended = self._ended, []
        for run in ended:
            if not run.told:
                run.told = True
                self._notice(run.ended_line())
                text = run.end.outcome.final_text if run.end is not None else ""
                if run.show_output and text.strip():
                    self._show(text)
