"""Asking the user about a tool call while a turn runs (`AgentSession.ask_permission`).

The turn runs in a worker thread; prompt_toolkit owns the terminal on the main thread. The worker
queues its question here and makes the prompt return (`Shell.signal("permission")`); the main
thread asks it (`ask_pending`) and hands the answer back. An interrupt (Esc, Ctrl+C) while a
question waits denies it, so the turn ends at once.

A sub-agent run asks the same way, from its own thread, also while no turn runs (a background
run: the question comes up at the prompt); its question names the run and waits on the run's
own `cancel`, so Esc on the parent's turn does not deny it, and a run that is stopped (`/exit`,
`agent_output` kill, a rewind) withdraws it: it is skipped, never asked late. Questions are asked
one at a time, in the order they came.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the permission rules (and the settings they read) load with the first question
    from ..agent.permissions import PermissionRequest


_SAVED = "(saved in .commandcode/settings.local.json)"


def choices(request: PermissionRequest) -> tuple[tuple[str, str], ...]:
    """The answers offered for `request`, in order, with what each tells the turn: once; the
    wider rules (a command's prefix, an edit's folder) and the exact ones, for this session (kept
    in memory) or for good (also saved); no. Only once or no when nothing can be remembered."""
    from ..agent.permissions import PermissionAnswer as Answer

    once, no = ("Yes, once", Answer.ALLOW_ONCE), ("No", Answer.DENY)
    if not request.rememberable:
        return once, no
    if not request.wider:
        return (once, ("Yes, for this session", Answer.ALLOW_SESSION),
                (f"Yes, and don't ask again {_SAVED}", Answer.ALWAYS), no)
    if request.tool != "bash":  # an edit or a read: its folder
        return (once, (f"Yes, allow all {request.wider_label} for this session", Answer.ALLOW_SESSION_WIDER),
                (f"Yes, and don't ask again for {request.wider_label} {_SAVED}", Answer.ALWAYS_WIDER), no)
    return (once,
            (f"Yes, allow {request.wider_label} for this session", Answer.ALLOW_SESSION_WIDER),
            ("Yes, allow this exact command for this session", Answer.ALLOW_SESSION),
            (f"Yes, and don't ask again for {request.wider_label} {_SAVED}", Answer.ALWAYS_WIDER),
            (f"Yes, and don't ask again for this exact command {_SAVED}", Answer.ALWAYS),
            no)

class PermissionPrompt:
    """The questions of the running turn, one at a time."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake  # makes the main thread's prompt return with a "permission" signal
        self._pending: queue.Queue[tuple[PermissionRequest, queue.Queue[str]]] = queue.Queue()

    def ask(self, request: PermissionRequest, cancel: threading.Event | None = None) -> str:
        """From the turn's thread: waits for the user's answer (DENY once `cancel` is set)."""
        answer: queue.Queue[str] = queue.Queue(maxsize=1)
        self._pending.put((request, answer))
        self._wake()
        while True:
            try:
                return answer.get(timeout=0.1)
            except queue.Empty:
                if cancel is not None and cancel.is_set():
                    from ..agent.permissions import PermissionAnswer

                    return PermissionAnswer.DENY

    def has_pending(self) -> bool:
        return not self._pending.empty()

    def ask_pending(self, choose: Callable[[str, list[str]], int | None], *,
                    show: Callable[[list[str]], None] | None = None, cwd: str = ".",
                    hold: Callable[[], AbstractContextManager[None]] = nullcontext) -> None:
        """On the main thread: asks every waiting question with `choose(question, options)`;
        the diff an edit would make goes to `show` first (`edit_preview.py`); while a question
        is up, `hold()` keeps what a running turn prints from landing in it."""
        while True:
            try:
                request, answer = self._pending.get_nowait()
            except queue.Empty:
                return
            if request.cancel is not None and request.cancel.is_set():
                continue  # withdrawn: its run was stopped (the run was answered no already)
            if show is not None:
                from .edit_preview import edit_diff

                diff = edit_diff(request.tool, request.input, cwd)
                if diff:
                    show(diff)
            rules = f" (rule: {', '.join(request.rules)})" if request.rules else ""
            offered = choices(request)
            who = f"{request.origin} asks: " if request.origin else ""
            with hold():
                picked = choose(f"{who}Allow {request.summary}?{rules}", [label for label, _ in offered])
            answer.put(offered[picked if picked is not None and 0 <= picked < len(offered) else -1][1])
