"""A new session's shell draws its prompt first and makes the session behind it meanwhile.

Start-up is a feature (the prompt within 250 ms of launch): for a plain new session nothing the
first keystroke needs depends on the session, so `Deferred` makes it — the session service and
its imports, the slash-command table, the settings' `statusLine` — in a background thread that
the shell starts once the prompt is on the screen. Whatever needs the value (a sent prompt, a
slash command, Tab completion) waits for it with `get()`, which re-raises what the maker raised;
the status line shows the launch's own facts until `peek()` has it. A launch that resumes, forks,
names or picks a model makes its session before the prompt, as before: its errors refuse it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Deferred(Generic[T]):
    """A value made once: in a background thread (`start`), or inline by the first `get`."""

    def __init__(self, make: Callable[[], T], *, on_done: Callable[[], None] | None = None) -> None:
        self._make = make
        self._on_done = on_done
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._started = False
        self._value: T | None = None
        self._error: BaseException | None = None

    @classmethod
    def ready(cls, value: T) -> Deferred[T]:
        """A value already made."""
        deferred = cls(lambda: value)
        deferred._started = True
        deferred._value = value
        deferred._done.set()
        return deferred

    def _claim(self) -> bool:
        with self._lock:
            if self._started:
                return False
            self._started = True
            return True

    def start(self) -> None:
        """Makes the value in a background thread (once; later calls do nothing)."""
        if self._claim():
            threading.Thread(target=self._run, name="commandcode-warm-start", daemon=True).start()

    def _run(self) -> None:
        try:
            self._value = self._make()
        except BaseException as error:  # re-raised by get(), in the thread that needs the value
            self._error = error
        finally:
            self._done.set()
            if self._on_done is not None:
                self._on_done()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def error(self) -> BaseException | None:
        """What the maker raised (once done), else None."""
        return self._error if self._done.is_set() else None

    def get(self) -> T:
        """The value, waiting for the background thread (or making it here when none started).

        Raises:
            BaseException: whatever making it raised.
        """
        if self._claim():
            self._run()
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value

    def peek(self) -> T | None:
        """The value when it is made without error, else None (never waits)."""
        return self._value if self._done.is_set() and self._error is None else None
