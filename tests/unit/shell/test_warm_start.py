"""`shell/warm_start.py`'s `Deferred`: made once, in the background or by the first `get`, its
error re-raised where the value is needed."""

from __future__ import annotations

import threading

import pytest

from commandcode.errors import CommandcodeError
from commandcode.shell.warm_start import Deferred


def test_made_once_in_the_background_and_waited_for() -> None:
    release, calls, done = threading.Event(), [], threading.Event()

    def make() -> str:
        calls.append(1)
        release.wait(timeout=30)
        return "value"

    deferred = Deferred(make, on_done=done.set)
    deferred.start()
    deferred.start()  # a second start does nothing
    assert deferred.peek() is None and not deferred.done
    release.set()
    assert deferred.get() == "value" and deferred.get() == "value"
    assert done.wait(timeout=30) and calls == [1] and deferred.peek() == "value" and deferred.error is None


def test_get_without_start_makes_it_inline() -> None:
    deferred = Deferred(lambda: threading.current_thread().name)
    assert deferred.get() == threading.current_thread().name


def test_the_makers_error_is_raised_by_get_and_peek_stays_empty() -> None:
    def make() -> str:
        raise CommandcodeError("cannot make it", hint="fix it")

    deferred: Deferred[str] = Deferred(make)
    deferred.start()
    with pytest.raises(CommandcodeError, match="cannot make it"):
        deferred.get()
    assert deferred.peek() is None and isinstance(deferred.error, CommandcodeError)


def test_ready_is_made_already() -> None:
    deferred = Deferred.ready(42)
    assert deferred.done and deferred.peek() == 42 and deferred.get() == 42
