"""Deferring interrupts while a multi-file commit runs.

A rewind changes three things that must land together: the files (one journaled native
restore), the conversation (a leaf move in the transcript) and the checkpoints file. A Ctrl-C or
`kill` between two of them left files rewound and the conversation not. `deferred_signals()`
holds SIGINT, SIGTERM and SIGHUP for the length of such a commit and delivers them (in the order
they came, once each) when it ends, so the process still exits as asked, but only after the
commit: wholly before or wholly after, never half.

Python-level handlers are used rather than a blocked signal mask: the native restore runs on
threads that do not share the main thread's mask, and Python runs its handlers on the main
thread only, between bytecodes, whichever thread the kernel picked.

Work the commit left running behind it (a restore's settle) is waited for before a held signal
is delivered: a SIGTERM's default action ends the process without running exit handlers. The
layer that starts such work registers the wait (`before_delivery`).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

DEFERRED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_before_delivery: list[Callable[[], object]] = []


def before_delivery(wait: Callable[[], object]) -> None:
    """Registers `wait`, run before held signals are delivered (once each time some arrived)."""
    _before_delivery.append(wait)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Holds SIGINT, SIGTERM and SIGHUP until the block ends, then delivers what arrived to the
    handlers that were in place before (a SIGINT then raises `KeyboardInterrupt`, a SIGTERM with
    the default action ends the process). Off the main thread (where handlers cannot be set) the
    block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def hold(number: int, _frame: object) -> None:
        if number not in pending:
            pending.append(number)

    previous: dict[int, signal._HANDLER] = {}
    try:
        for number in DEFERRED:
            previous[number] = signal.signal(number, hold)
        yield
    finally:
        try:
            for wait in list(_before_delivery) if pending else []:
                wait()
        finally:
            for held, handler in previous.items():
                signal.signal(held, handler)
            for arrived in pending:
                signal.raise_signal(arrived)
